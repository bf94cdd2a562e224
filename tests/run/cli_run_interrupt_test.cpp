// `troupe run` as a child process, interrupted by real signals: SIGINT / SIGTERM checkpoint and
// exit 130 / 143, the printed resume command resumes from that checkpoint, and a run blocked on
// input (a FIFO nobody writes) still exits promptly, saying it was waiting for input.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "tests/run/cli_run_test_util.hpp"

using namespace std::chrono_literals;
using troupe::testing::contains;
using troupe::testing::TroupeProcess;
namespace fs = std::filesystem;
namespace tt = troupe::testing;

namespace {

// Runs `file` in `dir`, signals after the first log line, and checks the interrupted run.
// Returns the printed "resume with:" line.
std::string interrupt_after_first_log(const std::string& file, const fs::path& dir, int sig,
                                      int expected_code, int64_t steps) {
  TroupeProcess p({"run", file, "--dir", dir.string(), "--steps", std::to_string(steps)});
  auto first = tt::read_line_starting(p, "step 10/", 60s);
  EXPECT_TRUE(first) << p.err();
  p.signal(sig);
  auto stopped = tt::read_line_starting(p, "stopped at step ", 10s);
  EXPECT_TRUE(stopped) << p.out() << p.err();
  auto hint = tt::read_line_starting(p, "resume with: ", 10s);
  EXPECT_TRUE(hint) << p.out() << p.err();
  EXPECT_EQ(p.wait(10s), expected_code) << p.err();
  return hint.value_or("");
}

int64_t checkpoint_step(const fs::path& dir) {
  std::ifstream pointer(dir / "checkpoint");
  std::string name;
  pointer >> name;  // "ckpt-<step>"
  return name.rfind("ckpt-", 0) == 0 ? std::stoll(name.substr(5)) : -1;
}

}  // namespace

TEST(CliRunInterrupt, SigintCheckpointsExits130AndThePrintedCommandResumes) {
  auto dir = tt::fresh_run_test_dir("sigint");
  // Steps enough that the signal lands mid-run (the first log comes at step 10), few enough that
  // the resumed run finishes quickly on a loaded machine.
  const int64_t steps = 8000;
  auto file = tt::write_file(dir / "small.yaml", tt::small_experiment(steps));
  auto run_dir = dir / "run";
  auto hint = interrupt_after_first_log(file, run_dir, SIGINT, 130, steps);
  const int64_t saved = checkpoint_step(run_dir);
  ASSERT_GE(saved, 10);
  ASSERT_LT(saved, steps) << "the run finished before the signal";

  // The hint names the file and the directory: it works from another working directory too.
  auto args = tt::resume_args(hint);
  ASSERT_GE(args.size(), 4u) << hint;
  EXPECT_TRUE(contains(hint, "--dir " + fs::absolute(run_dir).string())) << hint;
  EXPECT_TRUE(contains(hint, "--resume")) << hint;
  TroupeProcess resumed(args);
  auto from = tt::read_line_starting(resumed, "resumed from ", 60s);
  ASSERT_TRUE(from) << resumed.err();
  EXPECT_TRUE(contains(*from, "at step " + std::to_string(saved))) << *from;
  auto done = tt::read_line_starting(resumed, "finished at step " + std::to_string(steps), 120s);
  EXPECT_TRUE(done) << resumed.out() << resumed.err();
  EXPECT_EQ(resumed.wait(30s), 0) << resumed.err();
  fs::remove_all(dir);
}

TEST(CliRunInterrupt, SigtermCheckpointsAndExits143) {
  auto dir = tt::fresh_run_test_dir("sigterm");
  auto file = tt::write_file(dir / "small.yaml", tt::small_experiment(40000));
  auto hint = interrupt_after_first_log(file, dir / "run", SIGTERM, 143, 40000);
  EXPECT_TRUE(contains(hint, "--resume")) << hint;
  EXPECT_GE(checkpoint_step(dir / "run"), 10);
  fs::remove_all(dir);
}

namespace {

// An experiment whose only data file is a FIFO with no writer: opening it blocks for good.
std::string fifo_experiment(const fs::path& dir) {
  auto fifo = dir / "rows.csv";
  EXPECT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  return tt::write_file(
      dir / "fifo.yaml",
      "name: fifo\nstrategy: {kind: mirrored, devices: [CPU:0, CPU:1]}\n"
      "model: {kind: softmax, input_dim: 2, classes: 2}\n"
      "data: {kind: csv, files: [rows.csv], global_batch: 4, features: {a: {dtype: float32, "
      "shape: [2]}, label: {dtype: int64}}, label: label}\n"
      "optimizer: {kind: sgd, learning_rate: 0.1}\ntrain: {steps: 10}\n");
}

// Whether a thread of `pid` sleeps in the kernel opening or reading a FIFO (its wchan: opening a
// FIFO without a writer waits for one, reading one waits for data), polled until `within` has
// passed. A kernel that hides wchan (every thread reads "0") gets the old guess instead: 1 s.
bool blocked_on_the_fifo(pid_t pid, std::chrono::seconds within) {
  const auto start = std::chrono::steady_clock::now();
  const fs::path tasks = fs::path("/proc") / std::to_string(pid) / "task";
  bool wchan_shown = false;
  do {
    std::error_code ec;
    for (const auto& task : fs::directory_iterator(tasks, ec)) {
      std::ifstream in(task.path() / "wchan");
      std::string wchan;
      std::getline(in, wchan);
      if (wchan == "wait_for_partner" || wchan == "pipe_read" || wchan == "pipe_wait" ||
          wchan == "anon_pipe_read")
        return true;
      wchan_shown = wchan_shown || (!wchan.empty() && wchan != "0");
    }
    if (!wchan_shown && std::chrono::steady_clock::now() - start > 1s) return true;
    std::this_thread::sleep_for(10ms);
  } while (std::chrono::steady_clock::now() - start < within);
  return false;
}

}  // namespace

TEST(CliRunInterrupt, ARunBlockedOnAFifoExitsOnEitherSignal) {
  // SIGINT with the default grace period, SIGTERM with --stop-grace-ms 250.
  struct Case {
    int sig, code;
    std::vector<std::string> grace;
    std::string taken, gave_up;
  };
  for (const Case& c : {Case{SIGINT, 130, {}, "troupe run: SIGINT received", "gave up after 0.5 s"},
                        Case{SIGTERM,
                             143,
                             {"--stop-grace-ms", "250"},
                             "troupe run: SIGTERM received",
                             "gave up after 0.25 s"}}) {
    auto dir = tt::fresh_run_test_dir("fifo-" + std::to_string(c.sig));
    auto file = fifo_experiment(dir);
    std::vector<std::string> args{"run", file, "--dir", (dir / "run").string()};
    args.insert(args.end(), c.grace.begin(), c.grace.end());
    TroupeProcess p(args);
    ASSERT_TRUE(tt::read_line_starting(p, "troupe run: fifo", 60s)) << p.err();
    ASSERT_TRUE(blocked_on_the_fifo(p.pid(), 60s)) << p.err();  // the read that never returns
    p.signal(c.sig);
    EXPECT_EQ(p.wait(10s), c.code) << p.err();  // nullopt (killed at the deadline) if it hung
    EXPECT_TRUE(contains(p.err(), c.taken)) << p.err();
    EXPECT_TRUE(contains(p.err(), "interrupted by")) << p.err();
    EXPECT_TRUE(contains(p.err(), "while waiting for input")) << p.err();
    EXPECT_TRUE(contains(p.err(), c.gave_up)) << p.err();
    fs::remove_all(dir);
  }
}

TEST(CliRunInterrupt, ASecondSigintExitsAtOnce) {
  auto dir = tt::fresh_run_test_dir("twice");
  auto file = fifo_experiment(dir);
  // Nobody writes the FIFO, so the first signal's stop can only end by giving up after the grace
  // period, which is longer than any test runs: only the second signal can end the run. (Were
  // the signal taken while setting up, the stop would wait on the same FIFO for its checkpoint.)
  TroupeProcess p({"run", file, "--dir", (dir / "run").string(), "--stop-grace-ms", "3600000"});
  ASSERT_TRUE(tt::read_line_starting(p, "troupe run: fifo", 60s)) << p.err();
  p.signal(SIGINT);
  // The process says it took the first signal: the next one is a second signal, not merged into
  // the first.
  auto taken = tt::read_err_line_containing(p, "troupe run: SIGINT received", 60s);
  ASSERT_TRUE(taken) << p.err();
  EXPECT_TRUE(contains(*taken, "a second signal exits at once")) << *taken;
  p.signal(SIGINT);
  EXPECT_EQ(p.wait(60s), 130) << p.err();  // nullopt (killed at the deadline) if it hung
  EXPECT_TRUE(contains(p.err(), "second signal, exiting at once")) << p.err();
  EXPECT_FALSE(contains(p.err(), "gave up after")) << p.err();
  fs::remove_all(dir);
}

TEST(CliRunInterrupt, ANegativeStopGraceIsAUsageError) {
  TroupeProcess p({"run", "--stop-grace-ms", "-1"});
  EXPECT_EQ(p.wait(60s), 2) << p.err();
  EXPECT_TRUE(contains(p.err(), "--stop-grace-ms must be >= 0, got -1")) << p.err();
}
