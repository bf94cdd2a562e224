// train.steps_per_execution in `troupe run`: several steps per strategy.run, yet logs, CSV rows,
// TensorBoard scalars and checkpoints land on the same steps as one run per step, the trace
// names each chunk, and a resume (mid-chunk or from a mid-run checkpoint) ends bitwise equal.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "coordinator/runtime.hpp"
#include "experiment/checkpoint/checkpoint.hpp"
#include "experiment/experiment_file.hpp"
#include "experiment/run/event_writer.hpp"
#include "experiment/run/experiment_runner.hpp"
#include "tests/run/run_test_util.hpp"

using namespace troupe;
using troupe::testing::fresh_dir;
using troupe::testing::run;
namespace fs = std::filesystem;

namespace {

// 17 steps, log every 4, checkpoint every 5: chunks of 3 must stop short at both cadences.
proto::Experiment cadence_experiment(int64_t steps_per_execution) {
  std::ostringstream yaml;
  yaml << "name: spe\nseed: 11\n"
       << "strategy: {kind: mirrored, devices: [CPU:0, CPU:1], cross_device_ops: {kind: ring}}\n"
       << "model: {kind: mlp, input_dim: 16, hidden: [12], classes: 3}\n"
       << "data: {kind: synthetic_classification, examples: 500, global_batch: 32, shuffle: true}\n"
       << "optimizer: {kind: adam, learning_rate: 0.01}\n"
       << "train: {steps: 17, log_every: 4, checkpoint_every: 5, checkpoint_dir: runs/spe, "
       << "steps_per_execution: " << steps_per_execution << "}\n";
  return experiment::parse_experiment(yaml.str(), "spe.yaml");
}

std::set<int64_t> checkpoint_steps(const std::string& dir) {
  std::set<int64_t> steps;
  for (auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("ckpt-", 0) == 0 && entry.path().extension() == ".manifest")
      steps.insert(std::stoll(name.substr(5)));
  }
  return steps;
}

std::vector<int64_t> csv_steps(const std::string& path) {
  std::ifstream csv(path);
  std::string row;
  std::getline(csv, row);  // header
  std::vector<int64_t> steps;
  while (std::getline(csv, row)) steps.push_back(std::stoll(row.substr(0, row.find(','))));
  return steps;
}

std::vector<int64_t> loss_event_steps(const std::string& events_file) {
  std::vector<int64_t> steps;
  for (auto& ev : read_scalar_events(events_file))
    if (ev.tag == "loss") steps.push_back(ev.step);
  return steps;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Every tensor of a checkpoint (weights, optimizer slots, iterations) must match bit for bit.
void expect_bitwise_equal_checkpoints(const std::string& a, const std::string& b) {
  auto ta = checkpoint::read_checkpoint(a).tensors, tb = checkpoint::read_checkpoint(b).tensors;
  ASSERT_FALSE(ta.empty());
  ASSERT_EQ(ta.size(), tb.size());
  for (auto& [name, t] : ta) {
    ASSERT_TRUE(tb.count(name)) << name;
    EXPECT_TRUE(t.bitwise_equal(tb.at(name))) << a << " vs " << b << ": " << name;
  }
}

}  // namespace

TEST(StepsPerExecution, ChunksStopAtLogAndCheckpointStepsAndEqualOneRunPerStep) {
  Runtime runtime;
  auto chunked = fresh_dir("chunked"), single = fresh_dir("single");
  auto a = run(runtime, cadence_experiment(3), chunked, 0, false, chunked + "/trace.json");
  auto b = run(runtime, cadence_experiment(1), single);
  EXPECT_EQ(a.last_step, 17);
  EXPECT_EQ(b.last_step, 17);

  const std::set<int64_t> checkpoints{5, 10, 15, 17};
  EXPECT_EQ(checkpoint_steps(chunked), checkpoints);
  EXPECT_EQ(checkpoint_steps(single), checkpoints);
  const std::vector<int64_t> logged{4, 8, 12, 16, 17};
  EXPECT_EQ(csv_steps(a.metrics_csv), logged);
  EXPECT_EQ(csv_steps(b.metrics_csv), logged);
  EXPECT_EQ(loss_event_steps(a.events_file), logged);
  EXPECT_EQ(loss_event_steps(b.events_file), logged);

  for (int64_t step : checkpoints)
    expect_bitwise_equal_checkpoints(chunked + "/ckpt-" + std::to_string(step),
                                     single + "/ckpt-" + std::to_string(step));

  // Chunks of at most 3 cut at 4/5, 8/10, 12/15 and 16: 1-3, 4, 5, 6-8, 9-10, 11-12, 13-15, 16, 17.
  std::ifstream trace_file(chunked + "/trace.json");
  std::stringstream trace;
  trace << trace_file.rdbuf();
  const std::string text = trace.str();
  for (const char* chunk : {"steps 1-3", "step 4", "step 5", "steps 6-8", "steps 9-10",
                            "steps 11-12", "steps 13-15", "step 16", "step 17"})
    EXPECT_EQ(count(text, "\"name\":\"" + std::string(chunk) + "\",\"cat\":\"step\""), 1u) << chunk;
  EXPECT_EQ(count(text, "\"cat\":\"step\""), 9u);
  EXPECT_EQ(count(text, "\"name\":\"replica_step\""), 17u * 2);  // per inner step per replica
  // One input round trip per chunk (DistributedIterator::get_next_steps).
  EXPECT_EQ(count(text, "\"name\":\"get_next\""), 9u);
  fs::remove_all(chunked);
  fs::remove_all(single);
}

TEST(StepsPerExecution, ResumeMidChunkAndFromAMidRunCheckpointEndBitwiseEqual) {
  Runtime runtime;
  auto single = fresh_dir("resume-single"), cut = fresh_dir("resume-cut"),
       rewound = fresh_dir("resume-rewound");
  auto straight = run(runtime, cadence_experiment(1), single);

  // Stopped at 7 (inside what would be the chunk 6-8), resumed with chunks of 3.
  EXPECT_EQ(run(runtime, cadence_experiment(3), cut, /*steps=*/7).last_step, 7);
  auto resumed = run(runtime, cadence_experiment(3), cut, 0, /*resume=*/true);
  EXPECT_EQ(resumed.first_step, 7);
  EXPECT_EQ(resumed.last_step, 17);
  expect_bitwise_equal_checkpoints(straight.checkpoint, resumed.checkpoint);

  // A finished chunked run rewound to its mid-run checkpoint 10 (as if it crashed after it).
  run(runtime, cadence_experiment(3), rewound);
  std::vector<fs::path> later;
  for (auto& entry : fs::directory_iterator(rewound)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("ckpt-15.", 0) == 0 || name.rfind("ckpt-17.", 0) == 0)
      later.push_back(entry.path());
  }
  for (auto& path : later) fs::remove(path);
  auto again = run(runtime, cadence_experiment(3), rewound, 0, /*resume=*/true);
  EXPECT_EQ(again.first_step, 10);
  EXPECT_EQ(again.last_step, 17);
  EXPECT_EQ(checkpoint_steps(rewound), (std::set<int64_t>{5, 10, 15, 17}));
  expect_bitwise_equal_checkpoints(straight.checkpoint, again.checkpoint);
  fs::remove_all(single);
  fs::remove_all(cut);
  fs::remove_all(rewound);
}
