// Every experiment shipped in examples/ parses, plans and trains a few steps; the TFRecord one
// gets its data from the `troupe data synthesize` command its own comment gives, and trains to
// the accuracy that comment states.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "coordinator/runtime.hpp"
#include "experiment/experiment_file.hpp"
#include "experiment/plan.hpp"
#include "experiment/run/experiment_runner.hpp"
#include "tests/process/child_process.hpp"

using namespace troupe;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const fs::path kExamples = fs::path(TROUPE_SOURCE_DIR) / "examples";

fs::path temp_dir(const std::string& name) {
  auto dir =
      fs::temp_directory_path() / ("troupe-example-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// The arguments of the "#   troupe data synthesize ..." line of an example's comment, with --out
// pointed into `dir` (keeping the directory name the example's `files` use).
std::vector<std::string> synthesize_args(const fs::path& example, const fs::path& dir) {
  std::ifstream in(example);
  std::string line;
  const std::string marker = "troupe data synthesize ";
  while (std::getline(in, line)) {
    auto at = line.find(marker);
    if (line.rfind("#", 0) != 0 || at == std::string::npos) continue;
    std::istringstream words(line.substr(at + std::string("troupe ").size()));
    std::vector<std::string> args;
    for (std::string w; words >> w;) args.push_back(w);
    for (size_t i = 0; i + 1 < args.size(); ++i)
      if (args[i] == "--out") args[i + 1] = (dir / fs::path(args[i + 1]).filename()).string();
    return args;
  }
  return {};
}

// Where an example can train: examples with files get a copy of the YAML in a temp dir beside
// data made by their synthesize command (relative `files` resolve against the YAML's dir).
fs::path prepare(const fs::path& example, const fs::path& dir) {
  if (experiment::load_experiment(example.string()).data().files_size() == 0) return example;
  auto args = synthesize_args(example, dir);
  EXPECT_FALSE(args.empty()) << example << " reads files but names no `troupe data synthesize`";
  troupe::testing::TroupeProcess synthesize(args);
  EXPECT_EQ(synthesize.wait(120s), 0) << synthesize.err();
  fs::copy_file(example, dir / example.filename());
  return dir / example.filename();
}

}  // namespace

TEST(Examples, EveryExampleExperimentPlansAndTrains) {
  Runtime runtime;
  int seen = 0;
  for (auto& entry : fs::directory_iterator(kExamples)) {
    if (entry.path().extension() != ".yaml") continue;
    // Comparison files (a compare: section) are troupe compare's; tests/compare runs them.
    if (entry.path().filename().string().rfind("compare_", 0) == 0) continue;
    ++seen;
    SCOPED_TRACE(entry.path().string());
    auto dir = temp_dir(entry.path().stem().string());
    auto e = experiment::load_experiment(prepare(entry.path(), dir).string());
    auto plan = experiment::make_plan(e);
    EXPECT_FALSE(plan.replicas.empty());
    EXPECT_FALSE(plan.variables.empty());
    RunOptions o;
    o.run_dir = (dir / "run").string();
    o.steps = 5;
    o.out = std::tmpfile();
    auto s = run_experiment(runtime.system(), e, o);
    std::fclose(o.out);
    EXPECT_EQ(s.last_step, 5);
    EXPECT_TRUE(fs::exists(s.checkpoint + ".manifest"));
    fs::remove_all(dir);
  }
  EXPECT_GE(seen, 3);
}

TEST(Examples, TfrecordSoftmaxReachesItsStatedAccuracy) {
  const fs::path example = kExamples / "softmax_tfrecord.yaml";
  auto dir = temp_dir("softmax-accuracy");
  auto e = experiment::load_experiment(prepare(example, dir).string());
  ASSERT_EQ(e.data().kind(), "tfrecord");
  for (const auto& file : e.data().files()) EXPECT_TRUE(fs::exists(file)) << file;
  Runtime runtime;
  RunOptions o;
  o.run_dir = (dir / "run").string();
  o.out = std::tmpfile();
  auto s = run_experiment(runtime.system(), e, o);
  std::fclose(o.out);
  EXPECT_EQ(s.last_step, e.train().steps());
  // The example's comment: about 87% over the last logged window; overlapping classes keep it
  // well under 100%, so this also shows the labels were read (chance is 10%).
  EXPECT_GE(s.final_accuracy, 0.80);
  EXPECT_LT(s.final_loss, 1.0);
  fs::remove_all(dir);
}
