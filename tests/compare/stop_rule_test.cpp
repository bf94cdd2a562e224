// StopRuleTracker: the wall-time and target-loss rules decided on logged rows, and the metrics
// file reader they share with the report.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/status.hpp"
#include "experiment/compare/variant_metrics.hpp"

namespace troupe::experiment {
namespace {

TEST(StopRule, WallTimeCountsTrainingTimeFromTheLoggedRates) {
  StopRule rule;
  rule.wall_seconds = 2.5;
  StopRuleTracker tracker(rule);
  EXPECT_FALSE(tracker.add(10, 1.0, 10));  // 1 s
  EXPECT_FALSE(tracker.add(20, 0.9, 10));  // 2 s
  EXPECT_TRUE(tracker.add(25, 0.8, 5));    // 3 s
  EXPECT_EQ(tracker.reason(), "wall time 2.5 s reached at step 25");
  EXPECT_TRUE(tracker.add(30, 0.7, 5));  // stays triggered
  EXPECT_EQ(tracker.reason(), "wall time 2.5 s reached at step 25");
}

TEST(StopRule, TargetLossTriggersAtOrBelowIt) {
  StopRule rule;
  rule.target_loss = 0.5;
  StopRuleTracker tracker(rule);
  EXPECT_FALSE(tracker.add(5, 0.50000001, 10));
  EXPECT_TRUE(tracker.add(10, 0.5, 10));
  EXPECT_EQ(tracker.reason(), "target loss 0.5 reached at step 10");
}

TEST(StopRule, NoRuleBeyondStepsNeverTriggers) {
  StopRuleTracker tracker(StopRule{});
  for (int step = 1; step <= 100; ++step) EXPECT_FALSE(tracker.add(step, 0, 1));
  EXPECT_EQ(tracker.reason(), "");
}

TEST(StopRule, MetricsFileRowsCarryTheirTrainingTime) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("troupe-compare-metrics-" + std::to_string(::getpid()) + ".csv");
  std::ofstream(path) << "step,loss,accuracy,steps_per_s,examples_per_s\n"
                         "10,0.5,0.75,20,640\n20,0.25,-1,10,320\n";
  auto rows = read_metrics_csv(path.string());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].step, 10);
  EXPECT_DOUBLE_EQ(rows[0].train_seconds, 0.5);
  EXPECT_DOUBLE_EQ(rows[1].train_seconds, 1.5);
  EXPECT_EQ(rows[1].accuracy, -1);
  // A live run's last row may be half written: it is not read until its newline arrives.
  std::ofstream(path)
      << "step,loss,accuracy,steps_per_s,examples_per_s\n10,0.5,0.75,20,640\n20,0.2";
  EXPECT_EQ(read_metrics_csv(path.string()).size(), 1u);
  std::ofstream(path) << "step,loss,accuracy,steps_per_s,examples_per_s\n10,0.5,x,20,640\n";
  try {
    read_metrics_csv(path.string());
    FAIL() << "accepted a malformed row";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), path.string() + ":2: malformed row \"10,0.5,x,20,640\"");
  }
  std::filesystem::remove(path);
  try {
    read_metrics_csv(path.string());
    FAIL() << "read a missing file";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read metrics file " + path.string());
  }
}

}  // namespace
}  // namespace troupe::experiment
