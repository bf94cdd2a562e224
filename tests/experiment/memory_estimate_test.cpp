// The memory estimate: its parts for a known experiment, `plan` printing it, and parsing refusing
// an experiment that needs more than the machine has, naming the key that makes it large.
#include <cstdlib>

#include "experiment/memory_estimate.hpp"
#include "experiment/plan.hpp"
#include "tests/experiment/experiment_test_util.hpp"

using troupe::experiment::estimate_memory;
using troupe::experiment::parse_experiment;
using troupe::testing::parse_error;
using troupe::testing::replace_line;
using troupe::testing::valid_experiment_yaml;

namespace {

// TROUPE_MEMORY_BYTES for one scope: the machine's memory as the parser sees it.
struct MemoryLimit {
  explicit MemoryLimit(long long bytes) {
    ::setenv("TROUPE_MEMORY_BYTES", std::to_string(bytes).c_str(), 1);
  }
  ~MemoryLimit() { ::unsetenv("TROUPE_MEMORY_BYTES"); }
};

const long long kGiB = 1LL << 30;

}  // namespace

TEST(MemoryEstimate, PartsOfTheDefaultShapedMlp) {
  // mlp 784-256-64-10, momentum (one slot), 2 replicas, global batch 256.
  auto e = parse_experiment(valid_experiment_yaml(), "x.yaml");
  auto m = estimate_memory(e);
  const int64_t params = (784 * 256 + 256 + 256 * 64 + 64 + 64 * 10 + 10) * 4;
  EXPECT_EQ(m.parameters, params * 2);
  EXPECT_EQ(m.slots, params * 2);
  EXPECT_EQ(m.gradients, params * 4);
  EXPECT_EQ(m.activations, 128 * (784 + 2 * 256 + 2 * 64 + 2 * 10) * 4 * 2);
  // The batch in use and data.prefetch's default, 2 x train.steps_per_execution (8), ahead,
  // and the first epoch kept for the repeats (60,000 examples, no shuffle).
  EXPECT_EQ(m.input, 256 * (784 * 4 + 8) * (1 + 16) + 60000 * (784 * 4 + 8));
  EXPECT_EQ(m.total, m.parameters + m.slots + m.gradients + m.activations + m.input);
}

TEST(MemoryEstimate, TheFirstEpochCacheCountsOnlyWhenItIsKept) {
  using troupe::experiment::synthetic_cache_bytes;
  auto data = [](const std::string& section) {
    return parse_experiment(replace_line(valid_experiment_yaml(), "data:", "data: " + section),
                            "x.yaml");
  };
  EXPECT_EQ(synthetic_cache_bytes(
                data("{kind: synthetic_classification, examples: 1000, global_batch: 256}")),
            1000 * (784 * 4 + 8));
  // A shuffle passes examples one by one, so nothing is kept; nor is data over 256 MiB.
  EXPECT_EQ(synthetic_cache_bytes(data("{kind: synthetic_classification, examples: 1000, "
                                       "global_batch: 256, shuffle: true}")),
            0);
  EXPECT_EQ(synthetic_cache_bytes(
                data("{kind: synthetic_classification, examples: 100000, global_batch: 256}")),
            0);
}

TEST(MemoryEstimate, HugeHiddenLayerIsRefusedNamingModelHidden) {
  MemoryLimit limit(16 * kGiB);
  // 784 x 20M float32 = 58 GiB per copy.
  auto err = parse_error(replace_line(valid_experiment_yaml(), "model:",
                                      "model: {kind: mlp, input_dim: 784, hidden: [20000000], "
                                      "classes: 10}"));
  EXPECT_NE(err.find("model.hidden: the run needs about"), std::string::npos) << err;
  EXPECT_NE(err.find("but this machine has 16.0 GiB of memory; make model.hidden smaller"),
            std::string::npos)
      << err;
}

TEST(MemoryEstimate, HugeBatchIsRefusedNamingGlobalBatch) {
  MemoryLimit limit(16 * kGiB);
  auto err = parse_error(replace_line(
      valid_experiment_yaml(),
      "data:", "data: {kind: synthetic_classification, examples: 60000, global_batch: 20000000}"));
  EXPECT_NE(err.find("data.global_batch: the run needs about"), std::string::npos) << err;
  EXPECT_NE(err.find("make data.global_batch smaller"), std::string::npos) << err;
}

TEST(MemoryEstimate, HugeEmbeddingTableIsRefusedNamingNumItems) {
  MemoryLimit limit(16 * kGiB);
  auto err = parse_error(replace_line(
      replace_line(valid_experiment_yaml(), "model:",
                   "model: {kind: embedding, num_users: 100, num_items: 2000000000, "
                   "embedding_dim: 16}"),
      "data:", "data: {kind: synthetic_classification, examples: 60000, global_batch: 256}"));
  EXPECT_NE(err.find("model.num_items"), std::string::npos) << err;
  EXPECT_NE(err.find("make model.num_items smaller"), std::string::npos) << err;
}

TEST(MemoryEstimate, PlanPrintsTheEstimateAndTheAvailableMemory) {
  MemoryLimit limit(16 * kGiB);
  auto plan = troupe::experiment::make_plan(parse_experiment(valid_experiment_yaml(), "x.yaml"));
  EXPECT_EQ(plan.available_memory, 16 * kGiB);
  EXPECT_GT(plan.memory.total, 0);
  auto table = troupe::experiment::plan_to_table(plan);
  EXPECT_NE(table.find("memory (estimate): "), std::string::npos) << table;
  EXPECT_NE(table.find("; available 16.0 GiB"), std::string::npos) << table;
  auto json = troupe::experiment::plan_to_json(plan);
  EXPECT_NE(json.find("\"available\":17179869184"), std::string::npos) << json;
}
