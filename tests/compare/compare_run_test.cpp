// run_comparison end to end on small variants: the report's numbers are the variants' own
// metrics files, identical settings give identical curves, the rules stop runs, and a resumed
// comparison skips what finished.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "coordinator/runtime.hpp"
#include "experiment/compare/compare_report.hpp"
#include "experiment/compare/compare_runner.hpp"
#include "tests/compare/compare_test_util.hpp"

namespace troupe::experiment {
namespace {

namespace fs = std::filesystem;
using testing::comparison;

std::string fresh_out(const std::string& name) {
  auto dir =
      fs::temp_directory_path() / ("troupe-compare-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir.string();
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

CompareOutcome run(Runtime& runtime, const CompareSpec& spec, const std::string& out,
                   bool resume = false) {
  CompareOptions options;
  options.out_dir = out;
  options.resume = resume;
  options.out = std::tmpfile();
  options.troupe_binary = std::string(TROUPE_BINARY_DIR) + "/troupe";
  auto outcome = run_comparison(runtime.system(), spec, options);
  std::fclose(options.out);
  return outcome;
}

const char* kTwoRings =
    "compare:\n  stop: {steps: 20}\n  variants:\n"
    "    - {name: ring_a}\n"
    "    - {name: ring_b}\n"
    "    - name: one_device\n      strategy: {cross_device_ops: {kind: one_device}}\n";

TEST(CompareRun, IdenticalVariantsGiveIdenticalCurves) {
  Runtime runtime;
  auto spec = parse_compare(comparison(kTwoRings), "cmp.yaml");
  const std::string out = fresh_out("identical");
  run(runtime, spec, out);
  auto a = read_metrics_csv(variant_run_dir(out, "ring_a") + "/metrics.csv");
  auto b = read_metrics_csv(variant_run_dir(out, "ring_b") + "/metrics.csv");
  ASSERT_EQ(a.size(), 4u);  // steps 5, 10, 15, 20
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].step, b[i].step);
    EXPECT_EQ(a[i].loss, b[i].loss) << "step " << a[i].step;  // bitwise: same seed, same data
    EXPECT_EQ(a[i].accuracy, b[i].accuracy);
  }
  EXPECT_LT(a.back().loss, a.front().loss);  // it trained
  fs::remove_all(out);
}

TEST(CompareRun, ReportTableEqualsTheVariantsMetricsFiles) {
  Runtime runtime;
  auto spec = parse_compare(comparison(kTwoRings), "cmp.yaml");
  const std::string out = fresh_out("table");
  auto outcome = run(runtime, spec, out);
  EXPECT_EQ(outcome.report, out + "/report.md");
  EXPECT_EQ(outcome.ran, (std::vector<std::string>{"ring_a", "ring_b", "one_device"}));
  std::ifstream summary(out + "/summary.csv");
  std::string line;
  std::getline(summary, line);
  EXPECT_EQ(line.rfind("variant,workers,replicas,steps,examples_per_s,", 0), 0u);
  for (const auto& v : spec.variants) {
    ASSERT_TRUE(std::getline(summary, line));
    // The variant's own files, read independently of the report.
    const std::string dir = variant_run_dir(out, v.name);
    std::ifstream csv(dir + "/metrics.csv");
    std::string row, last;
    std::getline(csv, row);
    EXPECT_EQ(row, "step,loss,accuracy,steps_per_s,examples_per_s");
    double seconds = 0, previous_step = 0;
    while (std::getline(csv, row)) {
      last = row;
      double step, loss, accuracy, steps_per_s, examples_per_s;
      ASSERT_EQ(std::sscanf(row.c_str(), "%lf,%lf,%lf,%lf,%lf", &step, &loss, &accuracy,
                            &steps_per_s, &examples_per_s),
                5);
      seconds += (step - previous_step) / steps_per_s;
      previous_step = step;
    }
    double step, loss, accuracy, steps_per_s, examples_per_s;
    std::sscanf(last.c_str(), "%lf,%lf,%lf,%lf,%lf", &step, &loss, &accuracy, &steps_per_s,
                &examples_per_s);
    char name[64];
    int workers, replicas;
    long long steps;
    double table_eps, table_ttt, table_loss, table_acc;
    ASSERT_EQ(std::sscanf(line.c_str(), "%63[^,],%d,%d,%lld,%lf,%lf,%lf,%lf", name, &workers,
                          &replicas, &steps, &table_eps, &table_ttt, &table_loss, &table_acc),
              8)
        << line;
    EXPECT_EQ(std::string(name), v.name);
    EXPECT_EQ(replicas, 2);
    EXPECT_EQ(steps, 20);
    EXPECT_EQ(table_loss, loss);
    EXPECT_EQ(table_acc, accuracy);
    EXPECT_NEAR(table_eps, 20.0 * 32 / seconds, 1e-6 * table_eps);
    EXPECT_EQ(table_ttt, -1);  // no target loss in this rule
    EXPECT_NE(line.find("\"ran all 20 steps\""), std::string::npos) << line;
    // The timeline's breakdown is there and adds up.
    auto b = read_step_breakdown(dir + "/timeline.json");
    EXPECT_EQ(b.steps, 20);
    EXPECT_GT(b.compute_ms, 0);
    EXPECT_GT(b.communication_ms + b.barrier_ms, 0);
    EXPECT_NEAR(b.compute_ms + b.communication_ms + b.barrier_ms + b.wait_ms, b.step_ms,
                1e-6 * b.step_ms);
    // The MLP's gradients: 16x32 + 32 + 32x4 + 4 floats all-reduced per step (plus the
    // optimizer's non-finite flag).
    EXPECT_GE(b.bytes_per_step, (16 * 32 + 32 + 32 * 4 + 4) * 4.0) << v.name;
  }
  // The page embeds the plots, which exist; TensorBoard events sit side by side under runs/.
  const std::string page = read_all(outcome.report);
  for (const char* plot : {"loss_vs_time", "loss_vs_step", "throughput", "step_breakdown"}) {
    EXPECT_NE(page.find(std::string("(plots/") + plot + ".png)"), std::string::npos) << plot;
    EXPECT_GT(fs::file_size(out + "/plots/" + plot + ".png"), 1000u) << plot;
  }
  for (const auto& v : spec.variants) {
    bool events = false;
    for (const auto& entry : fs::directory_iterator(variant_run_dir(out, v.name)))
      events |= entry.path().filename().string().rfind("events.out.tfevents.", 0) == 0;
    EXPECT_TRUE(events) << v.name;
    EXPECT_NE(page.find("| " + v.name + " | 1 x 2 | 20 |"), std::string::npos) << page;
  }
  const std::string metrics = read_all(out + "/metrics.json");
  EXPECT_NE(metrics.find("\"name\":\"one_device\""), std::string::npos);
  fs::remove_all(out);
}

TEST(CompareRun, TargetLossStopsEachVariantAtTheFirstLogAtOrBelowIt) {
  Runtime runtime;
  // Where a plain run's loss is after 10 steps: the rule must stop there.
  auto probe = parse_compare(comparison("compare:\n  stop: {steps: 40}\n  variants:\n"
                                        "    - {name: probe}\n"),
                             "cmp.yaml");
  const std::string probe_out = fresh_out("probe");
  run(runtime, probe, probe_out);
  auto rows = read_metrics_csv(variant_run_dir(probe_out, "probe") + "/metrics.csv");
  ASSERT_EQ(rows.size(), 8u);
  const double target = rows[1].loss;  // step 10
  fs::remove_all(probe_out);

  std::ostringstream rule;
  rule.precision(17);
  rule << "compare:\n  stop: {steps: 40, target_loss: " << target
       << "}\n  variants:\n    - {name: probe}\n";
  auto spec = parse_compare(comparison(rule.str()), "cmp.yaml");
  const std::string out = fresh_out("target");
  run(runtime, spec, out);
  auto stopped = read_metrics_csv(variant_run_dir(out, "probe") + "/metrics.csv");
  ASSERT_GE(stopped.size(), 2u);
  EXPECT_EQ(stopped.back().step, 10);  // bitwise the same run up to there, then stopped
  auto summary = summarize_variant(spec, 0, out);
  EXPECT_EQ(summary.time_to_target, stopped[1].train_seconds);
  EXPECT_EQ(summary.stop_reason.rfind("target loss ", 0), 0u) << summary.stop_reason;
  EXPECT_NE(summary.stop_reason.find("reached at step 10"), std::string::npos);
  fs::remove_all(out);
}

TEST(CompareRun, ResumeSkipsFinishedVariantsAndRunsTheRest) {
  Runtime runtime;
  auto spec = parse_compare(comparison(kTwoRings), "cmp.yaml");
  const std::string out = fresh_out("resume");
  run(runtime, spec, out);
  const std::string before = read_all(variant_run_dir(out, "ring_b") + "/metrics.csv");
  // A fresh comparison into the same directory is refused before anything runs.
  try {
    run(runtime, spec, out);
    FAIL() << "a second fresh comparison was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::failed_precondition);
    EXPECT_NE(std::string(e.what()).find("already holds a comparison"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("--resume"), std::string::npos);
  }
  // As if the comparison had been stopped during "one_device": its marker is missing.
  fs::remove(variant_done_file(out, "one_device"));
  auto outcome = run(runtime, spec, out, /*resume=*/true);
  EXPECT_EQ(outcome.skipped, (std::vector<std::string>{"ring_a", "ring_b"}));
  EXPECT_EQ(outcome.ran, (std::vector<std::string>{"one_device"}));
  EXPECT_EQ(read_all(variant_run_dir(out, "ring_b") + "/metrics.csv"), before);  // untouched
  // The restarted variant is one run from step 0, not two pieces.
  auto rows = read_metrics_csv(variant_run_dir(out, "one_device") + "/metrics.csv");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows.front().step, 5);
  fs::remove_all(out);
}

TEST(CompareRun, MultiWorkerVariantRunsThroughTheLauncher) {
  Runtime runtime;
  auto spec =
      parse_compare(comparison("compare:\n  stop: {steps: 10}\n  variants:\n"
                               "    - name: two_workers\n      workers: 2\n"
                               "      strategy: {kind: multi_worker_mirrored, devices: [CPU:0], "
                               "cross_device_ops: ~}\n"),
                    "cmp.yaml");
  const std::string out = fresh_out("launch");
  run(runtime, spec, out);
  auto summary = summarize_variant(spec, 0, out);
  EXPECT_EQ(summary.workers, 2);
  EXPECT_EQ(summary.replicas, 2);
  ASSERT_EQ(summary.rows.size(), 2u);
  EXPECT_EQ(summary.rows.back().step, 10);
  EXPECT_EQ(summary.stop_reason, "ran all 10 steps");
  EXPECT_GT(summary.breakdown.steps, 0);  // the chief's timeline
  fs::remove_all(out);
}

TEST(CompareRun, AFailedVariantIsNamed) {
  Runtime runtime;
  auto spec =
      parse_compare(comparison("compare:\n  stop: {steps: 10}\n  variants:\n"
                               "    - name: two_workers\n      workers: 2\n"
                               "      strategy: {kind: multi_worker_mirrored, devices: [CPU:0], "
                               "cross_device_ops: ~}\n"),
                    "cmp.yaml");
  const std::string out = fresh_out("failed");
  CompareOptions options;
  options.out_dir = out;
  options.out = std::tmpfile();
  options.troupe_binary = out + "/no-such-troupe";
  try {
    run_comparison(runtime.system(), spec, options);
    ADD_FAILURE() << "a variant whose launcher cannot start succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "variant \"two_workers\": troupe launch -n 2 " + out +
                                         "/runs/two_workers/experiment.yaml failed (exit 127)");
  }
  options.troupe_binary.clear();
  options.resume = true;
  try {
    run_comparison(runtime.system(), spec, options);
    ADD_FAILURE() << "a multi-worker variant ran without a troupe executable";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "variant \"two_workers\": it needs 2 worker processes, but no troupe executable "
              "was given to launch them");
  }
  std::fclose(options.out);
  EXPECT_FALSE(fs::exists(variant_done_file(out, "two_workers")));
  fs::remove_all(out);
}

}  // namespace
}  // namespace troupe::experiment
