// Auto-shard policies (spec §2.7.7) with 2 and 3 workers.
#include <algorithm>
#include <fstream>

#include "core/data/auto_shard.hpp"
#include "core/data/file_sources.hpp"
#include "core/data/rebatch.hpp"
#include "data_test_util.hpp"

using namespace troupe;
using namespace troupe::data;
using namespace troupe::data::testing;
using V = std::vector<int64_t>;

namespace {
// `n` CSV files; file f holds the values f*100 .. f*100 + rows - 1.
std::vector<std::string> csv_files(int n, int rows) {
  std::vector<std::string> paths;
  for (int f = 0; f < n; ++f) {
    paths.push_back(temp_path("part" + std::to_string(f) + ".csv"));
    std::ofstream out(paths.back());
    for (int r = 0; r < rows; ++r) out << f * 100 + r << "\n";
  }
  return paths;
}
Dataset csv_source(const std::vector<std::string>& files) {
  return csv_dataset(files, {{DType::int64}});
}
V sorted(V v) {
  std::sort(v.begin(), v.end());
  return v;
}
// Values every worker sees under `policy`.
std::vector<V> per_worker(const Dataset& ds, int64_t workers, AutoShardPolicy expect_applied) {
  std::vector<V> out;
  for (int64_t i = 0; i < workers; ++i) {
    auto r = auto_shard_dataset(ds, workers, i, workers);
    EXPECT_EQ(r.applied, expect_applied) << auto_shard_policy_name(r.applied);
    out.push_back(drain_flat(r.dataset));
  }
  return out;
}
}  // namespace

TEST(AutoShard, OffGivesEveryWorkerEverything) {
  for (int64_t w : {2, 3}) {
    auto ds = Dataset::range(0, 10).with_auto_shard_policy(AutoShardPolicy::off);
    for (const auto& v : per_worker(ds, w, AutoShardPolicy::off)) EXPECT_EQ(v, drain_flat(ds));
  }
}

TEST(AutoShard, FileSplitsFilesWithTwoWorkers) {
  auto files = csv_files(3, 2);
  auto ds = csv_source(files).with_auto_shard_policy(AutoShardPolicy::file);
  auto got = per_worker(ds, 2, AutoShardPolicy::file);
  EXPECT_EQ(got[0], (V{0, 1, 200, 201}));  // files 0 and 2
  EXPECT_EQ(got[1], (V{100, 101}));        // file 1
}

TEST(AutoShard, FileSplitsFilesWithThreeWorkersUpstreamOfTransforms) {
  auto files = csv_files(3, 4);
  auto ds = csv_source(files).shuffle(4, 1).batch(2).with_auto_shard_policy(AutoShardPolicy::file);
  auto got = per_worker(ds, 3, AutoShardPolicy::file);
  for (int f = 0; f < 3; ++f)
    EXPECT_EQ(sorted(got[size_t(f)]), (V{f * 100, f * 100 + 1, f * 100 + 2, f * 100 + 3}));
}

TEST(AutoShard, FileWithNonFileSourceIsNotFound) {
  auto ds = Dataset::range(0, 10).batch(2).with_auto_shard_policy(AutoShardPolicy::file);
  try {
    auto_shard_dataset(ds, 2, 0, 2);
    FAIL() << "FILE sharding of a range dataset succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::not_found);
    EXPECT_NE(std::string(e.what()).find("source 'range' is not a file reader"), std::string::npos);
  }
}

TEST(AutoShard, FileWithFewerFilesThanWorkersIsNotFound) {
  auto ds = csv_source(csv_files(2, 2)).with_auto_shard_policy(AutoShardPolicy::file);
  EXPECT_ERROR_CONTAINS(auto_shard_dataset(ds, 3, 0, 3),
                        "source 'csv' has 2 file(s), fewer than the 3 workers");
}

TEST(AutoShard, DataKeepsEveryWthElementWithTwoAndThreeWorkers) {
  for (int64_t w : {2, 3}) {
    auto ds = Dataset::range(0, 12).with_auto_shard_policy(AutoShardPolicy::data);
    auto got = per_worker(ds, w, AutoShardPolicy::data);
    V all;
    for (int64_t i = 0; i < w; ++i) {
      for (auto v : got[size_t(i)]) EXPECT_EQ(v % w, i);
      all.insert(all.end(), got[size_t(i)].begin(), got[size_t(i)].end());
    }
    EXPECT_EQ(sorted(all), drain_flat(Dataset::range(0, 12)));
  }
}

TEST(AutoShard, DataShardGoesBeforeTheFinalPrefetchAndRebatchBecomesLegacy) {
  // Clone for 2 workers x 2 replicas of range(16).batch(8): rebatch + prefetch, then DATA.
  auto ds = Dataset::range(0, 16).batch(8).with_auto_shard_policy(AutoShardPolicy::data);
  std::vector<std::vector<V>> workers;
  for (int64_t i = 0; i < 2; ++i) {
    auto clone = rebatch_for_worker(ds, 2, 4, i);
    auto r = auto_shard_dataset(clone, 2, i, 4);
    EXPECT_EQ(r.dataset.node()->name(), "prefetch");
    EXPECT_EQ(r.dataset.node()->inputs()[0]->name(), "shard");
    EXPECT_EQ(r.dataset.node()->inputs()[0]->inputs()[0]->name(), "legacy_rebatch");
    workers.push_back(drain(r.dataset));
  }
  // legacy_rebatch(4) cuts each batch of 8 into 4 pieces of 2; worker i keeps pieces i, i+2.
  EXPECT_EQ(workers[0], (std::vector<V>{{0, 1}, {4, 5}, {8, 9}, {12, 13}}));
  EXPECT_EQ(workers[1], (std::vector<V>{{2, 3}, {6, 7}, {10, 11}, {14, 15}}));
}

TEST(AutoShard, AutoPrefersFiles) {
  auto ds = csv_source(csv_files(4, 1));  // AUTO is the default
  EXPECT_EQ(ds.auto_shard_policy(), AutoShardPolicy::auto_);
  auto got = per_worker(ds, 2, AutoShardPolicy::file);
  EXPECT_EQ(got[0], (V{0, 200}));
  EXPECT_EQ(got[1], (V{100, 300}));
  auto three = per_worker(ds, 3, AutoShardPolicy::file);
  EXPECT_EQ(three[0], (V{0, 300}));
}

TEST(AutoShard, AutoFallsBackToDataWithAWarning) {
  for (int64_t w : {2, 3}) {
    auto r = auto_shard_dataset(Dataset::range(0, 9), w, 1, w);
    EXPECT_EQ(r.applied, AutoShardPolicy::data);
    EXPECT_NE(r.warning.find("AUTO auto-sharding fell back to DATA: FILE auto-sharding: source "
                             "'range' is not a file reader"),
              std::string::npos)
        << r.warning;
    V want;
    for (int64_t v = 1; v < 9; v += w) want.push_back(v);
    EXPECT_EQ(drain_flat(r.dataset), want);
  }
  // Fewer files than workers also falls back.
  auto r = auto_shard_dataset(csv_source(csv_files(1, 4)), 2, 0, 2);
  EXPECT_EQ(r.applied, AutoShardPolicy::data);
  EXPECT_EQ(drain_flat(r.dataset), (V{0, 2}));
}

TEST(AutoShard, HintReplacesPlaceholders) {
  auto ds = Dataset::range(0, 10)
                .shard(kShardHint, kShardHint)
                .batch(2)
                .with_auto_shard_policy(AutoShardPolicy::hint);
  auto r = auto_shard_dataset(ds, 3, 2, 3);
  EXPECT_EQ(drain(r.dataset), (std::vector<V>{{2, 5}, {8}}));
  EXPECT_ERROR_CONTAINS(drain(ds), "shard(SHARD_HINT, SHARD_HINT) was never replaced");
}

TEST(AutoShard, OneWorkerChangesNothing) {
  auto ds = Dataset::range(0, 5).with_auto_shard_policy(AutoShardPolicy::data);
  EXPECT_EQ(drain_flat(auto_shard_dataset(ds, 1, 0, 2).dataset), drain_flat(ds));
}
