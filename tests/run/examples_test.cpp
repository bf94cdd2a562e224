// Every experiment shipped in examples/ parses, plans and trains a few steps.
#include <gtest/gtest.h>

#include <filesystem>

#include "coordinator/experiment/experiment_file.hpp"
#include "coordinator/experiment/plan.hpp"
#include "coordinator/run/experiment_runner.hpp"
#include "coordinator/runtime.hpp"

using namespace troupe;

TEST(Examples, EveryExampleExperimentPlansAndTrains) {
  Runtime runtime;
  int seen = 0;
  for (auto& entry :
       std::filesystem::directory_iterator(std::string(TROUPE_SOURCE_DIR) + "/examples")) {
    if (entry.path().extension() != ".yaml") continue;
    ++seen;
    SCOPED_TRACE(entry.path().string());
    auto e = experiment::load_experiment(entry.path().string());
    auto plan = experiment::make_plan(e);
    EXPECT_FALSE(plan.replicas.empty());
    EXPECT_FALSE(plan.variables.empty());
    auto dir =
        std::filesystem::temp_directory_path() /
        ("troupe-example-" + entry.path().stem().string() + "-" + std::to_string(::getpid()));
    RunOptions o;
    o.run_dir = dir.string();
    o.steps = 5;
    o.out = std::tmpfile();
    auto s = run_experiment(runtime.system(), e, o);
    std::fclose(o.out);
    EXPECT_EQ(s.last_step, 5);
    EXPECT_TRUE(std::filesystem::exists(s.checkpoint + ".manifest"));
    std::filesystem::remove_all(dir);
  }
  EXPECT_GE(seen, 2);
}
