// `troupe compare` as a process: a comparison that runs and resumes, a bad variant refused
// before anything runs (exit 1), a used --out refused as a usage error (exit 2).
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/compare/compare_test_util.hpp"
#include "tests/process/child_process.hpp"

namespace troupe::testing {
namespace {

namespace fs = std::filesystem;

fs::path fresh(const std::string& name) {
  auto dir =
      fs::temp_directory_path() / ("troupe-cli-compare-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

int finish(TroupeProcess& p) {
  auto code = p.wait(std::chrono::minutes(5));
  EXPECT_TRUE(code.has_value()) << "troupe compare did not exit";
  return code.value_or(-1);
}

TEST(CliCompare, RunsThenResumesSkippingFinishedVariants) {
  auto dir = fresh("runs");
  const std::string file = (dir / "cmp.yaml").string();
  std::ofstream(file) << comparison(
      "compare:\n  stop: {steps: 10}\n  variants:\n"
      "    - {name: ring}\n    - name: hier\n"
      "      strategy: {cross_device_ops: {kind: hierarchical}}\n");
  const std::string out = (dir / "out").string();
  {
    TroupeProcess p({"compare", file, "--out", out});
    ASSERT_EQ(finish(p), 0) << p.out() << p.err();
    EXPECT_TRUE(contains(p.out(), "troupe compare: variant 2/2 \"hier\" (mirrored, 1 worker(s))"));
    EXPECT_TRUE(contains(p.out(), "report: " + out + "/report.md")) << p.out();
  }
  {
    TroupeProcess p({"compare", file, "--out", out});
    EXPECT_EQ(finish(p), 2);
    EXPECT_TRUE(contains(p.err(), "troupe compare: '" + out + "' already holds a comparison"))
        << p.err();
  }
  {
    TroupeProcess p({"compare", file, "--out", out, "--resume"});
    ASSERT_EQ(finish(p), 0) << p.out() << p.err();
    EXPECT_TRUE(contains(p.out(), "variant 1/2 \"ring\" already finished"));
    EXPECT_TRUE(contains(p.out(), "variant 2/2 \"hier\" already finished"));
  }
  fs::remove_all(dir);
}

TEST(CliCompare, CtrlCStopsTheRunningVariantWithoutAReport) {
  auto dir = fresh("interrupt");
  const std::string file = (dir / "cmp.yaml").string();
  std::ofstream(file) << comparison(
      "compare:\n  stop: {steps: 100000}\n  variants:\n"
      "    - {name: long}\n");
  const std::string out = (dir / "out").string();
  TroupeProcess p({"compare", file, "--out", out});
  // The first log line says training is under way.
  bool logged = false;
  while (auto line = p.read_line(std::chrono::minutes(2)))
    if (line->rfind("step ", 0) == 0) {
      logged = true;
      break;
    }
  ASSERT_TRUE(logged) << p.out() << p.err();
  p.signal(SIGINT);
  EXPECT_EQ(finish(p), 130) << p.err();
  EXPECT_TRUE(
      contains(p.out(), "resume with: troupe compare " + file + " --out " + out + " --resume"))
      << p.out();
  EXPECT_FALSE(fs::exists(out + "/runs/long/compare_done"));
  EXPECT_FALSE(fs::exists(out + "/report.md"));
  fs::remove_all(dir);
}

TEST(CliCompare, BadVariantIsRefusedBeforeAnythingRuns) {
  auto dir = fresh("bad");
  const std::string file = (dir / "cmp.yaml").string();
  std::ofstream(file) << comparison(
      "compare:\n  stop: {steps: 10}\n  variants:\n"
      "    - {name: ring}\n    - name: typo\n"
      "      optimizer: {learning_rat: 0.5}\n");
  const std::string out = (dir / "out").string();
  TroupeProcess p({"compare", file, "--out", out});
  EXPECT_EQ(finish(p), 1);
  EXPECT_TRUE(contains(p.err(), "troupe compare: error: " + file +
                                    ":13:19: variant \"typo\" (compare.variants[1]): "
                                    "optimizer.learning_rat: unknown key"))
      << p.err();
  EXPECT_FALSE(fs::exists(out));  // nothing ran
  fs::remove_all(dir);
}

// The shipped example, whole: every variant (the 2-worker one through troupe launch) and the page.
TEST(CliCompare, TheStrategiesExampleRunsAndWritesItsReport) {
  auto dir = fresh("example");
  const std::string out = (dir / "out").string();
  TroupeProcess p({"compare", std::string(TROUPE_SOURCE_DIR) + "/examples/compare_strategies.yaml",
                   "--out", out});
  ASSERT_EQ(finish(p), 0) << p.out() << p.err();
  std::ifstream page(out + "/report.md");
  std::string text((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  for (const char* row : {"| ring | 1 x 2 |", "| hierarchical | 1 x 2 |",
                          "| reduce_to_one | 1 x 2 |", "| multi_worker_2x1 | 2 x 1 |",
                          "| ps_async | 2 x 1 + 2 ps |", "| ps_sync | 2 x 1 + 2 ps |"})
    EXPECT_TRUE(contains(text, row)) << row << "\n" << text;
  for (const char* plot : {"loss_vs_time", "loss_vs_step", "throughput", "step_breakdown"})
    EXPECT_TRUE(fs::exists(out + "/plots/" + plot + ".png")) << plot;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace troupe::testing
