// Every auto-shard policy with 2 and 3 input workers, end to end through the distributed
// iterator (spec §2.7.7): OFF duplicates, FILE and DATA partition, AUTO picks FILE for file
// readers and falls back to DATA (with a warning) otherwise.
#include <algorithm>
#include <numeric>

#include "tests/input/input_test_util.hpp"

namespace troupe::testing {
namespace {

using data::AutoShardPolicy;
using data::Dataset;

std::vector<int64_t> sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<int64_t> iota(int64_t first, int64_t count) {
  std::vector<int64_t> v(static_cast<size_t>(count));
  std::iota(v.begin(), v.end(), first);
  return v;
}

// W files of `per_file` values each: file i holds i*100 ...
std::vector<std::string> files(int w, int64_t per_file) {
  std::vector<std::string> out;
  for (int i = 0; i < w; ++i)
    out.push_back(write_int_file("f" + std::to_string(i), i * 100, per_file));
  return out;
}

std::vector<int64_t> file_values(int w, int64_t per_file) {
  std::vector<int64_t> out;
  for (int i = 0; i < w; ++i)
    for (int64_t v = 0; v < per_file; ++v) out.push_back(i * 100 + v);
  return out;
}

class AutoShardTest : public InputTest, public ::testing::WithParamInterface<int> {};

TEST_P(AutoShardTest, OffEveryWorkerReadsEverything) {
  int w = GetParam();
  auto ds = Dataset::range(0, 12).batch(w).with_auto_shard_policy(AutoShardPolicy::off);
  auto dist = distribute(w, ds, workers(w));
  EXPECT_EQ(dist.applied_auto_shard_policies(),
            std::vector<AutoShardPolicy>(size_t(w), AutoShardPolicy::off));
  auto steps = drain(dist);
  // G = W over W replicas: one row per replica per step; each worker walks the whole range.
  ASSERT_EQ(steps.size(), 12u);
  for (size_t s = 0; s < steps.size(); ++s)
    for (int r = 0; r < w; ++r) EXPECT_EQ(steps[s][size_t(r)], (std::vector<int64_t>{int64_t(s)}));
}

TEST_P(AutoShardTest, FileEachWorkerReadsItsOwnFiles) {
  int w = GetParam();
  auto ds = int_files(files(w, 6)).batch(2 * w).with_auto_shard_policy(AutoShardPolicy::file);
  auto dist = distribute(2 * w, ds, workers(w));
  EXPECT_EQ(dist.applied_auto_shard_policies(),
            std::vector<AutoShardPolicy>(size_t(w), AutoShardPolicy::file));
  auto steps = drain(dist);
  ASSERT_EQ(steps.size(), 3u);
  for (auto& step : steps)
    for (int r = 0; r < 2 * w; ++r) {
      ASSERT_EQ(step[size_t(r)].size(), 1u);
      EXPECT_EQ(step[size_t(r)][0] / 100, r / 2)
          << "replica " << r << " is fed by worker " << r / 2;
    }
  EXPECT_EQ(sorted(flatten(steps)), file_values(w, 6));
}

TEST_P(AutoShardTest, FileWithFewerFilesThanWorkersIsNotFound) {
  int w = GetParam();
  auto ds = int_files(files(1, 4)).batch(w).with_auto_shard_policy(AutoShardPolicy::file);
  try {
    distribute(w, ds, workers(w));
    ADD_FAILURE() << "expected not_found";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::not_found) << e.what();
  }
}

TEST_P(AutoShardTest, FileOnANonFileSourceIsNotFound) {
  int w = GetParam();
  auto ds = Dataset::range(0, 12).batch(w).with_auto_shard_policy(AutoShardPolicy::file);
  try {
    distribute(w, ds, workers(w));
    ADD_FAILURE() << "expected not_found";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::not_found) << e.what();
  }
}

TEST_P(AutoShardTest, DataEachWorkerKeepsEveryWthPiece) {
  int w = GetParam();
  // G = W, N = W: legacy_rebatch(W) gives one row per piece; worker i keeps pieces i, i+W, ...
  auto ds = Dataset::range(0, 3 * w).batch(w).with_auto_shard_policy(AutoShardPolicy::data);
  auto dist = distribute(w, ds, workers(w));
  EXPECT_EQ(dist.applied_auto_shard_policies(),
            std::vector<AutoShardPolicy>(size_t(w), AutoShardPolicy::data));
  auto steps = drain(dist);
  ASSERT_EQ(steps.size(), 3u);
  for (size_t s = 0; s < 3; ++s)
    for (int r = 0; r < w; ++r)
      EXPECT_EQ(steps[s][size_t(r)], (std::vector<int64_t>{int64_t(s) * w + r})) << s << "/" << r;
}

TEST_P(AutoShardTest, AutoPicksFileForFileReaders) {
  int w = GetParam();
  auto ds = int_files(files(w, 4)).batch(w);
  auto dist = distribute(w, ds, workers(w));
  EXPECT_EQ(dist.applied_auto_shard_policies(),
            std::vector<AutoShardPolicy>(size_t(w), AutoShardPolicy::file));
  EXPECT_TRUE(dist.warnings().empty());
  EXPECT_EQ(sorted(flatten(drain(dist))), file_values(w, 4));
}

TEST_P(AutoShardTest, AutoFallsBackToDataWithAWarning) {
  int w = GetParam();
  auto ds = Dataset::range(0, 6 * w).batch(2 * w);
  auto dist = distribute(2 * w, ds, workers(w));
  EXPECT_EQ(dist.applied_auto_shard_policies(),
            std::vector<AutoShardPolicy>(size_t(w), AutoShardPolicy::data));
  ASSERT_EQ(dist.warnings().size(), size_t(w));
  EXPECT_NE(dist.warnings()[0].find("input worker 0"), std::string::npos) << dist.warnings()[0];
  EXPECT_EQ(sorted(flatten(drain(dist))), iota(0, 6 * w));
}

INSTANTIATE_TEST_SUITE_P(Workers, AutoShardTest, ::testing::Values(2, 3),
                         [](const auto& info) { return "W" + std::to_string(info.param); });

}  // namespace
}  // namespace troupe::testing
