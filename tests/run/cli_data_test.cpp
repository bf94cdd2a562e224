// `troupe data synthesize`, run as a child process of the built binary: the shards it writes are
// TFRecord files of tf.train.Example records, and every usage error names the option.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/data/example_proto.hpp"
#include "core/data/tfrecord.hpp"
#include "tests/process/child_process.hpp"

using namespace std::chrono_literals;
using troupe::testing::contains;
using troupe::testing::TroupeProcess;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  auto dir = fs::temp_directory_path() / ("troupe-data-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

// Exit code and stderr of `troupe data args...`.
std::pair<int, std::string> data_command(std::vector<std::string> args) {
  args.insert(args.begin(), "data");
  TroupeProcess p(args);
  auto code = p.wait(60s);
  return {code.value_or(-1), p.err()};
}

}  // namespace

TEST(CliData, SynthesizeWritesShardsOfExamples) {
  auto dir = fresh_dir("shards");
  TroupeProcess p({"data", "synthesize", "--out", dir.string(), "--examples", "10", "--features",
                   "3", "--classes", "2", "--shards", "3", "--seed", "4"});
  ASSERT_EQ(p.wait(60s), 0) << p.err();
  EXPECT_TRUE(contains(p.out(), "wrote 10 examples in 3 shard(s)")) << p.out();
  EXPECT_TRUE(contains(p.out(), "features: {x: {dtype: float32, shape: [3]}")) << p.out();
  int64_t total = 0;
  std::vector<int64_t> per_shard;
  for (int s = 0; s < 3; ++s) {
    auto path = dir / ("train-0000" + std::to_string(s) + "-of-00003.tfrecord");
    ASSERT_TRUE(fs::exists(path)) << path;
    troupe::data::TFRecordReader reader(path.string());
    int64_t n = 0;
    while (auto record = reader.next()) {
      auto example = troupe::data::decode_example(*record);
      ASSERT_EQ(example.at("x").floats.size(), 3u);
      ASSERT_EQ(example.at("label").int64s.size(), 1u);
      EXPECT_TRUE(example.at("label").int64s[0] == 0 || example.at("label").int64s[0] == 1);
      ++n;
    }
    per_shard.push_back(n);
    total += n;
  }
  EXPECT_EQ(total, 10);
  EXPECT_EQ(per_shard, (std::vector<int64_t>{3, 3, 4}));
  for (auto& entry : fs::directory_iterator(dir))  // renamed into place: no temporaries left
    EXPECT_EQ(entry.path().extension(), ".tfrecord") << entry.path();
  fs::remove_all(dir);
}

TEST(CliData, UsageErrorsNameTheOption) {
  auto out = fresh_dir("usage").string();
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  for (const auto& c : std::vector<Case>{
           {{"synthesize"}, "--out DIR is required"},
           {{"shuffle"}, "unknown data command 'shuffle' (known: synthesize)"},
           {{"synthesize", "--out", out, "--kind", "regression"},
            "--kind: unknown kind 'regression' (known: classification, ratings)"},
           {{"synthesize", "--out", out, "--shards", "0"}, "--shards must be between 1 and"},
           {{"synthesize", "--out", out, "--examples", "4", "--shards", "5"},
            "--shards must be between 1 and --examples (4)"},
           {{"synthesize", "--out", out, "--classes", "1"}, "--classes must be >= 2"},
           {{"synthesize", "--out", out, "--features", "0"}, "--features must be >= 1"},
           {{"synthesize", "--out", out, "--separation", "0"}, "--separation must be > 0"},
           {{"synthesize", "--out", out, "--kind", "ratings", "--rank", "0"},
            "--users, --items and --rank must be >= 1"},
       }) {
    auto [code, err] = data_command(c.args);
    EXPECT_EQ(code, 2) << err;
    EXPECT_TRUE(contains(err, c.expected)) << err;
  }
  EXPECT_FALSE(fs::exists(out));  // nothing written on a usage error
}

TEST(CliData, AnOutputPathThatIsAFileIsAnErrorNamingIt) {
  auto file = fresh_dir("file");
  std::ofstream(file) << "not a directory";
  auto [code, err] = data_command({"synthesize", "--out", file.string()});
  EXPECT_EQ(code, 1) << err;
  EXPECT_TRUE(contains(err, file.string())) << err;
  fs::remove(file);
}
