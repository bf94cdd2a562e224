// In-memory synthetic ratings (`data: {kind: synthetic_ratings}`) are the ratings
// `troupe data synthesize --kind ratings` writes for the same seed and sizes; a parameter_server
// run over them writes a timeline of every worker step's parts (what `troupe compare` reads for
// its bytes and waiting-for-parameters columns) and stops where stop_after_log says.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/json.hpp"
#include "experiment/experiment_file.hpp"
#include "experiment/run/experiment_input.hpp"
#include "experiment/run/progress.hpp"
#include "tests/process/child_process.hpp"
#include "tests/run/run_test_util.hpp"

using namespace troupe;
using namespace troupe::testing;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

proto::Experiment ratings_experiment(const std::string& data, const std::string& strategy_extra) {
  return experiment::parse_experiment(
      "name: ps-ratings\nseed: 9\nstrategy: {kind: parameter_server, num_ps: 2, workers: 2, "
      "partitioner: {kind: fixed, num_shards: 2}" +
      strategy_extra +
      "}\nmodel: {kind: embedding, num_users: 20, num_items: 10, embedding_dim: 4}\n"
      "data: " +
      data +
      "\noptimizer: {kind: adagrad, learning_rate: 0.5}\n"
      "train: {steps: 40, log_every: 10}\n");
}

const char* kInMemory = "{kind: synthetic_ratings, examples: 300, global_batch: 16, rank: 2}";

}  // namespace

TEST(SyntheticRatingsRun, AreTheRatingsTroupeDataSynthesizeWrites) {
  const std::string dir = fresh_dir("ratings-files");
  TroupeProcess p({"data", "synthesize", "--kind", "ratings", "--out", dir, "--examples", "300",
                   "--users", "20", "--items", "10", "--rank", "2", "--shards", "2", "--seed",
                   "9"});
  ASSERT_EQ(p.wait(60s).value_or(-1), 0) << p.err();
  const auto files = ratings_experiment(
      "{kind: tfrecord, files: [" + dir + "/train-00000-of-00002.tfrecord, " + dir +
          "/train-00001-of-00002.tfrecord], features: {ids: {dtype: int64, shape: [2]}, rating: "
          "{dtype: float32}}, label: rating, global_batch: 16}",
      "");
  auto from_files = make_examples_dataset(files).make_iterator();
  auto in_memory = make_examples_dataset(ratings_experiment(kInMemory, "")).make_iterator();
  int n = 0;
  while (auto a = from_files.next()) {
    auto b = in_memory.next();
    ASSERT_TRUE(b) << "the in-memory ratings ended after " << n;
    ASSERT_EQ(a->at(0).to_vector<int64_t>(), b->at(0).to_vector<int64_t>()) << "example " << n;
    ASSERT_EQ(a->at(1).shape(), b->at(1).shape());
    ASSERT_EQ(a->at(1).scalar<float>(), b->at(1).scalar<float>()) << "example " << n;  // bitwise
    ++n;
  }
  EXPECT_EQ(n, 300);
  EXPECT_FALSE(in_memory.next());
  fs::remove_all(dir);
}

TEST(SyntheticRatingsRun, APsRunWritesEveryWorkerStepsPartsToItsTimeline) {
  Runtime runtime;
  const std::string dir = fresh_dir("ps-timeline");
  RunOptions o;
  o.run_dir = dir;
  o.timeline_path = dir + "/timeline.json";
  o.out = std::tmpfile();
  auto s = run_experiment(runtime.system(), ratings_experiment(kInMemory, ", mode: sync"), o);
  std::rewind(o.out);
  std::string printed;
  for (int c; (c = std::fgetc(o.out)) != EOF;) printed += char(c);
  std::fclose(o.out);
  EXPECT_EQ(s.last_step, 40);
  EXPECT_EQ(s.timeline, dir + "/timeline.json");
  // PsTrainer::traffic() per worker step: the offer (384 bytes) plus half a mean push (768 / 2).
  EXPECT_NE(printed.find("parameter_server: per worker step 480 bytes pulled, 768 bytes pushed, "),
            std::string::npos)
      << printed;
  std::ifstream in(s.timeline);
  std::ostringstream text;
  text << in.rdbuf();
  std::map<std::string, int> spans;  // "replica worker_step", "ps pull 480 bytes", ...
  const Json trace = Json::parse(text.str());
  for (const Json& e : trace.find("traceEvents")->items())
    ++spans[e.find("cat")->text() + " " + e.find("name")->text()];
  // 40 steps x 2 workers; each pulls both tables, (20 + 10) x 4 float32, and offers its 8 rows
  // of each table's gradient: 8 x 4 float32 + 8 int64 ids, twice.
  EXPECT_EQ(spans["replica worker_step"], 80);
  EXPECT_EQ(spans["ps input"], 80);
  EXPECT_EQ(spans["ps token"], 80);
  EXPECT_EQ(spans["ps pull 480 bytes"], 80);
  EXPECT_EQ(spans["ps offer 384 bytes"], 80);
  EXPECT_EQ(spans["ps push 768 bytes"], 40);  // the mean of both workers' rows, once a step
  EXPECT_EQ(spans["step steps 1-10"], 1);
  fs::remove_all(dir);
}

TEST(SyntheticRatingsRun, APsRunStopsAtTheLogStopAfterLogChooses) {
  Runtime runtime;
  const std::string dir = fresh_dir("ps-stop");
  RunOptions o;
  o.run_dir = dir;
  o.out = std::tmpfile();
  o.stop_after_log = [](const ProgressPoint& p) { return p.step == 20; };
  auto s = run_experiment(runtime.system(), ratings_experiment(kInMemory, ""), o);
  std::fclose(o.out);
  EXPECT_EQ(s.last_step, 20);
  EXPECT_TRUE(s.interrupted);
  fs::remove_all(dir);
}

TEST(SyntheticRatingsRun, AnUnwritableTimelineFailsBeforeTraining) {
  Runtime runtime;
  const std::string dir = fresh_dir("ps-bad-timeline");
  const std::string path = dir + "/no/such/dir/timeline.json";
  try {
    run(runtime, ratings_experiment(kInMemory, ""), dir, 0, false, path);
    ADD_FAILURE() << "ran with an unwritable timeline";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write timeline '" + path + "'"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir + "/metrics.csv"));
  fs::remove_all(dir);
}
