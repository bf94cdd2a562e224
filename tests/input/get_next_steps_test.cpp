// DistributedIterator::get_next_steps: a chunk of steps in one round trip to the input workers
// gives exactly the steps get_next gives one by one (with shuffle, several input workers and
// read-ahead buffers), stops where the data ends, leaves the iterator where a save/restore
// continues exactly, and fails as get_next does (a dead input worker is named; a silent one:
// input_errors_test.cpp). Steps asked for ahead (prefetch_steps) come next, go back to their
// workers when the position is saved, and are dropped by a restore.
#include <caf/all.hpp>

#include <chrono>
#include <future>
#include <thread>

#include "tests/input/input_test_util.hpp"

namespace troupe::testing {
namespace {

using data::AutoShardPolicy;
using data::Dataset;

struct ChunkCase {
  int replicas;
  int64_t workers;
  int64_t buffer;
  int64_t chunk;
};

class GetNextStepsTest : public InputTest, public ::testing::WithParamInterface<ChunkCase> {
 protected:
  DistributedDataset dataset() {
    auto c = GetParam();
    return distribute(c.replicas, shuffled_two_epochs(), workers(c.workers, c.buffer));
  }

  // Takes a chunk, asks for `prefetched` more ahead, saves: a restore, and the iterator itself,
  // continue right after the chunk.
  void expect_a_save_after_a_chunk_continues_after_it(int64_t prefetched) {
    auto dist = dataset();
    const auto reference = drain(dist);
    const size_t chunk = size_t(GetParam().chunk);
    ASSERT_GT(reference.size(), chunk + 1);
    auto it = dist.make_iterator();
    ASSERT_EQ(it.get_next_steps(int64_t(chunk)).size(), chunk);
    it.prefetch_steps(prefetched);
    auto state = it.save();
    std::vector<StepValues> rest(reference.begin() + std::ptrdiff_t(chunk), reference.end());
    auto restored = dist.make_iterator();
    restored.restore(state);
    EXPECT_EQ(drain(restored), rest);
    EXPECT_EQ(drain(it), rest);
  }
};

TEST_P(GetNextStepsTest, ChunksGiveTheStepsOfGetNextInOrderAndEndWithTheData) {
  auto dist = dataset();
  const auto reference = drain(dist);
  ASSERT_GT(reference.size(), size_t(GetParam().chunk));
  auto it = dist.make_iterator();
  std::vector<StepValues> chunked;
  for (;;) {
    auto steps = it.get_next_steps(GetParam().chunk);
    ASSERT_LE(steps.size(), size_t(GetParam().chunk));
    for (auto& s : steps) chunked.push_back(values_of(s));
    if (steps.size() < size_t(GetParam().chunk)) break;  // only where the data ended
  }
  EXPECT_EQ(chunked, reference);
  EXPECT_TRUE(it.get_next_steps(GetParam().chunk).empty());
  EXPECT_FALSE(it.get_next_as_optional());
}

TEST_P(GetNextStepsTest, AStateSavedAfterAChunkContinuesRightAfterIt) {
  expect_a_save_after_a_chunk_continues_after_it(0);
}

// The save hands the steps asked for ahead back to their workers first.
TEST_P(GetNextStepsTest, PrefetchedStepsComeNextAndASaveInBetweenLosesNone) {
  expect_a_save_after_a_chunk_continues_after_it(GetParam().chunk + 1);
}

TEST_P(GetNextStepsTest, PrefetchedStepsAreTakenFirstByGetNextAndGetNextSteps) {
  auto dist = dataset();
  const auto reference = drain(dist);
  auto it = dist.make_iterator();
  it.prefetch_steps(GetParam().chunk);
  it.prefetch_steps(2);  // adds to those already asked for
  std::vector<StepValues> got;
  got.push_back(values_of(it.get_next()));
  for (auto& s : it.get_next_steps(GetParam().chunk + 3)) got.push_back(values_of(s));
  ASSERT_LE(got.size(), reference.size());
  EXPECT_EQ(got, std::vector<StepValues>(reference.begin(),
                                         reference.begin() + std::ptrdiff_t(got.size())));
  EXPECT_EQ(got.size(), size_t(GetParam().chunk) + 4);
}

TEST_P(GetNextStepsTest, ARestoreDropsPrefetchedSteps) {
  auto dist = dataset();
  const auto reference = drain(dist);
  auto it = dist.make_iterator();
  it.get_next_steps(2);
  auto state = it.save();
  it.get_next_steps(GetParam().chunk);
  it.prefetch_steps(GetParam().chunk);
  it.restore(state);
  EXPECT_EQ(drain(it), std::vector<StepValues>(reference.begin() + 2, reference.end()));
}

INSTANTIATE_TEST_SUITE_P(Layouts, GetNextStepsTest,
                         ::testing::Values(ChunkCase{2, 1, 1, 8}, ChunkCase{3, 1, 4, 3},
                                           ChunkCase{4, 2, 1, 5}, ChunkCase{3, 3, 2, 1}),
                         [](const auto& info) {
                           return "N" + std::to_string(info.param.replicas) + "_W" +
                                  std::to_string(info.param.workers) + "_Buf" +
                                  std::to_string(info.param.buffer) + "_Chunk" +
                                  std::to_string(info.param.chunk);
                         });

TEST_F(InputTest, GetNextStepsOfNoStepsTakesNoneAndANegativeCountIsRefused) {
  auto dist = distribute(2, Dataset::range(0, 4).batch(2));
  auto it = dist.make_iterator();
  EXPECT_TRUE(it.get_next_steps(0).empty());
  EXPECT_ERROR_CONTAINS(it.get_next_steps(-1), "count must be >= 0, got -1");
  EXPECT_EQ(values_of(it.get_next()), (StepValues{{0}, {1}}));
}

TEST_F(InputTest, PrefetchPastTheEndGivesTheRestThenNothingAndSavesAtTheEnd) {
  auto dist = distribute(2, Dataset::range(0, 8).batch(2));
  auto it = dist.make_iterator();
  it.prefetch_steps(10);
  auto steps = it.get_next_steps(10);
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_EQ(values_of(steps[3]), (StepValues{{6}, {7}}));
  EXPECT_TRUE(it.get_next_steps(1).empty());
  it.prefetch_steps(3);  // nothing is asked for past the end
  auto state = it.save();
  auto restored = dist.make_iterator();
  restored.restore(state);
  EXPECT_FALSE(restored.get_next_as_optional());
  EXPECT_ERROR_CONTAINS(it.prefetch_steps(-2), "count must be >= 0, got -2");
}

TEST_F(InputTest, StepsAskedForAheadAndTakenLaterThanTheRequestTimeoutArrive) {
  // request_timeout bounds how long a worker takes to answer once asked; steps asked for ahead
  // are answered at once, and the caller may take them after a chunk longer than that.
  InputOptions o;
  o.request_timeout = std::chrono::milliseconds(100);
  auto dist = distribute(2, Dataset::range(0, 12).batch(2), o);
  auto it = dist.make_iterator();
  it.prefetch_steps(3);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  auto steps = it.get_next_steps(3);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(values_of(steps[2]), (StepValues{{4}, {5}}));
  it.prefetch_steps(2);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  auto state = it.save();
  auto restored = dist.make_iterator();
  restored.restore(state);
  EXPECT_EQ(drain(restored), (std::vector<StepValues>{{{6}, {7}}, {{8}, {9}}, {{10}, {11}}}));
}

TEST_F(InputTest, GetNextStepsReportsAnInputErrorInsideTheChunk) {
  auto dist = distribute(2, range_failing_at(16, 9));
  auto it = dist.make_iterator();
  EXPECT_EQ(it.get_next_steps(2).size(), 2u);  // elements 0-7
  EXPECT_ERROR_CONTAINS(it.get_next_steps(4), "element 9 is bad");
  // The failure sticks, as get_next's does.
  EXPECT_ERROR_CONTAINS(it.get_next_steps(1), "element 9 is bad");
}

TEST_F(InputTest, GetNextStepsWithADeadInputWorkerNamesItInsteadOfHanging) {
  InputOptions o = workers(2);
  o.request_timeout = std::chrono::seconds(30);
  auto ds = Dataset::range(0, 16).batch(2).with_auto_shard_policy(AutoShardPolicy::off);
  auto dist = distribute(2, ds, o);
  auto it = dist.make_iterator();
  ASSERT_EQ(it.get_next_steps(2).size(), 2u);
  kill_and_wait(it.input_worker_actors().at(1));
  try {
    it.get_next_steps(3);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::unavailable) << e.what();
    EXPECT_NE(std::string(e.what()).find("input worker 1 did not answer a pull"), std::string::npos)
        << e.what();
  }
}

TEST_F(InputTest, GetNextStepsInsideAnotherStrategysScopeIsAnError) {
  auto dist = distribute(2, Dataset::range(0, 4).batch(2));
  auto it = dist.make_iterator();
  MirroredStrategy other(runtime.system(), {"CPU:0"});
  {
    auto scope = other.scope();
    EXPECT_ERROR_CONTAINS(it.get_next_steps(1),
                          "belongs to another strategy than the current MirroredStrategy");
  }
  EXPECT_EQ(values_of(it.get_next()), (StepValues{{0}, {1}}));
}

TEST_F(InputTest, EndOfSequenceIsTheErrorGetNextThrowsAtTheEnd) {
  auto dist = distribute(2, Dataset::range(0, 2).batch(2));
  auto it = dist.make_iterator();
  it.get_next();
  const Error expected = DistributedIterator::end_of_sequence();
  EXPECT_EQ(expected.code(), Code::out_of_range);
  EXPECT_ERROR_CONTAINS(it.get_next(), expected.what());
}

}  // namespace
}  // namespace troupe::testing
