// Writes the seed corpora of the experiment_yaml and checkpoint fuzz targets from troupe's own
// writers:   fuzz_experiment_seeds <tests/fuzz/corpus>
// (the experiment_yaml corpus also holds examples/*.yaml, copied as they are).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/crc32c.hpp"
#include "core/data/dataset.hpp"
#include "core/tensor.hpp"
#include "experiment/checkpoint/checkpoint.hpp"
#include "experiment/experiment_file.hpp"
#include "tests/fuzz/seeds/seed_writer.hpp"

using namespace troupe;
namespace fs = std::filesystem;

namespace {

using fuzz::seed;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<Tensor> tensors() {
  return {Tensor::from_vector<float>(Shape(std::vector<int64_t>{2, 3}), {1, 2, 3, 4, 5, 6}),
          Tensor::from_scalar<int64_t>(-42),
          Tensor::from_vector<int32_t>(Shape(std::vector<int64_t>{3}), {7, 8, 9}),
          Tensor::zeros(DType::float64, Shape(std::vector<int64_t>{0, 4}))};
}

void experiment_seeds() {
  seed("experiment_yaml", "default", std::string(experiment::kDefaultExperimentYaml));
}

// Input layout of fuzz_checkpoint: flags, u16 manifest length (LE), manifest, data file.
std::string checkpoint_input(bool harness_crc, std::string manifest, const std::string& data) {
  if (harness_crc) manifest.resize(manifest.size() - 4);
  std::string out(1, char(harness_crc));
  out.push_back(char(manifest.size() & 0xff));
  out.push_back(char(manifest.size() >> 8));
  return out + manifest + data;
}

void checkpoint_seeds() {
  fs::path dir = fs::temp_directory_path() / "troupe-fuzz-seed-ckpt";
  fs::remove_all(dir);
  auto ts = tensors();
  std::map<std::string, Tensor> vars{{"dense_0/kernel", ts[0]}, {"step_count", ts[1]}};
  std::string state = data::Dataset::range(0, 10).batch(2).make_iterator().save();
  for (int variant = 0; variant < 2; ++variant) {
    std::map<std::string, std::string> blobs;
    if (variant) blobs["iterator/0"] = state;
    std::string prefix = checkpoint::write_checkpoint(dir.string(), 1, vars, blobs);
    std::string manifest = read_file(prefix + ".manifest"), data = read_file(prefix + ".data");
    std::string name = variant ? "with-blob" : "tensors";
    seed("checkpoint", name, checkpoint_input(false, manifest, data));
    seed("checkpoint", name + "-harness-crc", checkpoint_input(true, manifest, data));
    seed("checkpoint", name + "-data-truncated",
         checkpoint_input(false, manifest, data.substr(0, data.size() / 2)));
    fs::remove_all(dir);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <tests/fuzz/corpus>\n", argv[0]);
    return 2;
  }
  fuzz::seed_root() = argv[1];
  experiment_seeds();
  checkpoint_seeds();
  return 0;
}
