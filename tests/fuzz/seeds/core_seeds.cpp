// Writes the seed corpora of the core decoders' fuzz targets from troupe's own writers:
//   fuzz_core_seeds <tests/fuzz/corpus>
// Seeds are small valid inputs plus near-valid ones (truncated, one byte flipped), so the fuzzer
// starts past the checksums. Rerun it after a format change and commit the result.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/data/example_proto.hpp"
#include "core/data/file_sources.hpp"
#include "core/data/iterator_state.hpp"
#include "core/data/tfrecord.hpp"
#include "tests/fuzz/iterator_pipelines.hpp"
#include "tests/fuzz/seeds/seed_writer.hpp"

using namespace troupe;
using namespace troupe::data;

namespace {

using fuzz::seed;

std::string flipped(std::string s, size_t at) {
  if (!s.empty()) s[at % s.size()] ^= 0x20;
  return s;
}

std::vector<Example> examples() {
  Example a{{"x", Feature::of_floats({1.5f, -2.0f, 3.25f})}, {"y", Feature::of_int64s({7})}};
  Example b{{"image", Feature::of_bytes({"\x89PNG", ""})},
            {"label", Feature::of_int64s({-1, 0, 1LL << 40})}};
  Example c{{"empty", Feature{}}, {"f", Feature::of_floats({})}};
  return {a, b, c};
}

void tfrecord_and_example_seeds() {
  int n = 0;
  for (const auto& e : examples()) {
    std::string bytes = encode_example(e);
    seed("tf_example", "example-" + std::to_string(n), bytes);
    seed("tf_example", "example-truncated-" + std::to_string(n), bytes.substr(0, bytes.size() / 2));
    ++n;
  }
  std::string tmp = std::filesystem::temp_directory_path() / "troupe-seed.tfrecord";
  write_examples(tmp, examples());
  std::ifstream in(tmp, std::ios::binary);
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(tmp);
  seed("tfrecord", "examples", file);
  seed("tfrecord", "empty-record", tfrecord_frame(""));
  seed("tfrecord", "truncated", file.substr(0, file.size() - 3));
  seed("tfrecord", "data-crc-flipped", flipped(file, 14));
  seed("tfrecord", "length-crc-flipped", flipped(file, 9));
}

void csv_seeds() {
  // Byte 0: columns-1 in bits 0-1, a dtype per column in bits 2.., header 0x40, ';' 0x80.
  seed("csv", "floats", std::string(1, char(0x01 | 0x00)) + "1.5,2\n-3,4e2\n");
  seed("csv", "header-ints",
       std::string(1, char(0x02 | (2 << 2) | (3 << 4) | 0x40)) + "a,b,c\n1,2,3\r\n\n-4,5,6\n");
  seed("csv", "semicolon", std::string(1, char(0x01 | (1 << 2) | 0x80)) + "0.25;7\n1;");
  seed("csv", "bad-cell", std::string(1, char(0x00 | (2 << 2))) + "12\nx\n99999999999\n");
}

void json_seeds() {
  seed("json", "object", R"({"a": [1, -2.5e3, true, false, null], "b": {"c": "d\u00e9\n"}})");
  seed("json", "nested", R"([[[{}]], "\ud83d\ude00", 0, -0.0, 1E+2])");
  seed("json", "trailing-comma", R"({"a": 1,})");
  seed("tf_config", "worker",
       R"({"cluster": {"chief": ["c:2222"], "worker": ["w0:2222", "w1:2222"], "ps": ["p:2222"]},)"
       R"( "task": {"type": "worker", "index": 1}, "environment": "cloud", "rpc_layer": "grpc"})");
  seed(
      "tf_config", "sparse-evaluator",
      R"({"cluster": {"worker": {"0": "[::1]:5000", "3": "h:1"}}, "task": {"type": "evaluator", "index": 0}})");
  seed("tf_config", "out-of-range",
       R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": 3}})");
  seed("tf_config", "cluster-file",
       R"({"worker": ["127.0.0.1:2222", "localhost:2223"], "chief": ["h:1"]})");
}

void iterator_state_seeds() {
  for (int which = 0; which < fuzz::kIteratorPipelines; ++which) {
    Iterator it = fuzz::iterator_pipeline(which).make_iterator();
    for (int step = 0; step < 4; ++step) {
      std::string state = it.save();
      std::string name = "p" + std::to_string(which) + "-step" + std::to_string(step);
      seed("iterator_state", name, std::string(1, char(which)) + state);
      // Harness-sealed form: the payload alone, with bit 7 set.
      seed("iterator_state", name + "-payload",
           std::string(1, char(which | 0x80)) + std::string(unseal_state(state)));
      if (!it.next()) break;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <tests/fuzz/corpus>\n", argv[0]);
    return 2;
  }
  fuzz::seed_root() = argv[1];
  tfrecord_and_example_seeds();
  csv_seeds();
  json_seeds();
  iterator_state_seeds();
  return 0;
}
