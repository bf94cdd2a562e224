// A run directory belongs to one run: `troupe run` (a child process) refuses to start fresh where
// an earlier run's checkpoints or metrics are, `--overwrite` deletes exactly troupe's files
// first, and `--resume` continues as before.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "experiment/run/run_directory.hpp"
#include "tests/run/cli_run_test_util.hpp"

using namespace std::chrono_literals;
using troupe::testing::contains;
using troupe::testing::TroupeProcess;
namespace fs = std::filesystem;
namespace tt = troupe::testing;

namespace {

// Exit code, stdout and stderr of `troupe run args...`.
struct Result {
  int code;
  std::string out, err;
};
Result troupe_run(std::vector<std::string> args) {
  args.insert(args.begin(), "run");
  TroupeProcess p(args);
  auto code = p.wait(120s);
  return {code.value_or(-1), p.out(), p.err()};
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST(CliRunDir, AFreshRunWhereAnEarlierRunIsIsRefusedBeforeWriting) {
  auto dir = tt::fresh_run_test_dir("refuse");
  auto file = tt::write_file(dir / "small.yaml", tt::small_experiment(20));
  auto run_dir = (dir / "run").string();
  ASSERT_EQ(troupe_run({file, "--dir", run_dir}).code, 0);
  auto before = names_in(run_dir);
  auto r = troupe_run({file, "--dir", run_dir, "--steps", "30"});
  EXPECT_EQ(r.code, 2) << r.err;  // a usage error, like a bad option
  EXPECT_TRUE(contains(r.err, "run directory '" + run_dir + "' already holds an earlier run"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "--resume")) << r.err;
  EXPECT_TRUE(contains(r.err, "--overwrite")) << r.err;
  EXPECT_EQ(names_in(run_dir), before);  // nothing written, no new event file

  // metrics.csv alone (checkpoints deleted by hand) still marks the directory as used.
  for (auto& name : before)
    if (name != "metrics.csv") fs::remove(fs::path(run_dir) / name);
  EXPECT_EQ(troupe_run({file, "--dir", run_dir}).code, 2);
  fs::remove_all(dir);
}

TEST(CliRunDir, OverwriteRemovesOnlyTheEarlierRunsFilesAndStartsFresh) {
  auto dir = tt::fresh_run_test_dir("overwrite");
  auto file = tt::write_file(dir / "small.yaml", tt::small_experiment(20));
  auto run_dir = fs::path(dir / "run");
  ASSERT_EQ(troupe_run({file, "--dir", run_dir.string()}).code, 0);
  ASSERT_TRUE(fs::exists(run_dir / "ckpt-20.manifest"));
  tt::write_file(run_dir / "notes.txt", "mine");
  fs::create_directories(run_dir / "plots");

  auto r = troupe_run({file, "--dir", run_dir.string(), "--steps", "7", "--overwrite"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "finished at step 7")) << r.out;
  EXPECT_FALSE(contains(r.out, "resumed from")) << r.out;
  EXPECT_FALSE(fs::exists(run_dir / "ckpt-20.manifest"));
  EXPECT_FALSE(fs::exists(run_dir / "ckpt-20.data"));
  EXPECT_TRUE(fs::exists(run_dir / "ckpt-7.manifest"));
  EXPECT_TRUE(fs::exists(run_dir / "notes.txt"));  // not troupe's: kept
  EXPECT_TRUE(fs::is_directory(run_dir / "plots"));
  int events = 0;
  for (auto& name : names_in(run_dir)) events += name.rfind("events.out.tfevents.", 0) == 0;
  EXPECT_EQ(events, 1);
  std::ifstream csv(run_dir / "metrics.csv");
  std::string text((std::istreambuf_iterator<char>(csv)), {});
  EXPECT_FALSE(contains(text, "\n20,")) << text;  // the old run's rows are gone
  fs::remove_all(dir);
}

TEST(CliRunDir, ResumeStillContinuesAndContradictsOverwrite) {
  auto dir = tt::fresh_run_test_dir("resume");
  auto file = tt::write_file(dir / "small.yaml", tt::small_experiment(40));
  auto run_dir = (dir / "run").string();
  ASSERT_EQ(troupe_run({file, "--dir", run_dir, "--steps", "20"}).code, 0);
  auto r = troupe_run({file, "--dir", run_dir, "--resume"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "at step 20")) << r.out;
  EXPECT_TRUE(contains(r.out, "finished at step 40")) << r.out;
  // Steps 20-40 log two windows: the summary adds the steady state after the first (step 30).
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex(R"(, [0-9]+ examples/s \([0-9]+ examples/s after step 30\)\n)")))
      << r.out;
  auto both = troupe_run({file, "--dir", run_dir, "--resume", "--overwrite"});
  EXPECT_EQ(both.code, 2);
  EXPECT_TRUE(contains(both.err, "--resume and --overwrite")) << both.err;
  fs::remove_all(dir);
}

TEST(RunDirectory, EarlierRunFilesAreOnlyTheFilesTroupeWrites) {
  auto dir = tt::fresh_run_test_dir("files");
  for (auto name : {"ckpt-3.data", "ckpt-3.manifest", "ckpt-4.data.tmp", "checkpoint",
                    "metrics.csv", "events.out.tfevents.17.host", "notes.txt", "ckpt-x.data",
                    "checkpoint.bak", "metrics.csv.old", "my-events.out.tfevents.1"})
    tt::write_file(dir / name, "x");
  std::vector<std::string> found;
  for (auto& f : troupe::earlier_run_files(dir.string())) found.push_back(fs::path(f).filename());
  EXPECT_EQ(found, (std::vector<std::string>{"checkpoint", "ckpt-3.data", "ckpt-3.manifest",
                                             "ckpt-4.data.tmp", "events.out.tfevents.17.host",
                                             "metrics.csv"}));
  EXPECT_EQ(troupe::remove_earlier_run(dir.string()), 6u);
  EXPECT_EQ(names_in(dir),
            (std::vector<std::string>{"checkpoint.bak", "ckpt-x.data", "metrics.csv.old",
                                      "my-events.out.tfevents.1", "notes.txt"}));
  EXPECT_TRUE(troupe::earlier_run_files((dir / "missing").string()).empty());
  fs::remove_all(dir);
}
