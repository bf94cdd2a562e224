// DistributedIterator::save/restore mid-epoch: a restored iterator yields exactly what the
// uninterrupted one would have yielded next, with shuffle, read-ahead buffers and several
// input workers; corrupt or mismatched state is refused by name.
#include "tests/input/input_test_util.hpp"

namespace troupe::testing {
namespace {

using data::AutoShardPolicy;
using data::Dataset;

struct StateCase {
  int replicas;
  int64_t workers;
  int64_t buffer;
};

class IteratorStateTest : public InputTest, public ::testing::WithParamInterface<StateCase> {};

TEST_P(IteratorStateTest, RestoredMidEpochWithShuffleContinuesExactly) {
  auto c = GetParam();
  auto dist = distribute(c.replicas, shuffled_two_epochs(), workers(c.workers, c.buffer));
  auto reference = drain(dist);
  ASSERT_GT(reference.size(), 6u);

  auto it = dist.make_iterator();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(values_of(it.get_next()), reference[size_t(i)]);
  auto state = it.save();
  std::vector<StepValues> rest(reference.begin() + 5, reference.end());
  EXPECT_EQ(drain(it), rest) << "saving must not disturb the iterator";

  auto restored = dist.make_iterator();
  restored.get_next();  // its own position is replaced by the restore
  restored.restore(state);
  EXPECT_EQ(drain(restored), rest);
}

INSTANTIATE_TEST_SUITE_P(Layouts, IteratorStateTest,
                         ::testing::Values(StateCase{2, 1, 1}, StateCase{3, 1, 4},
                                           StateCase{4, 2, 1}, StateCase{3, 3, 2}),
                         [](const auto& info) {
                           return "N" + std::to_string(info.param.replicas) + "_W" +
                                  std::to_string(info.param.workers) + "_Buf" +
                                  std::to_string(info.param.buffer);
                         });

TEST_F(InputTest, RestoreAtTheEndStaysAtTheEnd) {
  auto dist = distribute(2, Dataset::range(0, 4).batch(2));
  auto it = dist.make_iterator();
  drain(it);
  auto state = it.save();
  auto again = dist.make_iterator();
  again.restore(state);
  EXPECT_FALSE(again.get_next_as_optional());
}

TEST_F(InputTest, RestoreRefusesCorruptBytes) {
  auto dist = distribute(2, Dataset::range(0, 8).batch(2));
  auto it = dist.make_iterator();
  it.get_next();
  auto state = it.save();
  state[state.size() / 2] ^= 0x5a;
  EXPECT_ERROR_CONTAINS(it.restore(state), "distributed iterator state: checksum mismatch");
  EXPECT_ERROR_CONTAINS(it.restore("nonsense"), "not a DistributedIterator state");
  EXPECT_EQ(values_of(it.get_next()), (StepValues{{2}, {3}})) << "a failed restore changes nothing";
}

TEST_F(InputTest, RestoreRefusesAStateOfADifferentLayout) {
  auto ds = Dataset::range(0, 8).batch(4).with_auto_shard_policy(AutoShardPolicy::off);
  auto two_workers = distribute(2, ds, workers(2)).make_iterator();
  auto state = two_workers.save();
  auto one_worker = distribute(2, ds).make_iterator();
  EXPECT_ERROR_CONTAINS(one_worker.restore(state),
                        "saved for 2 input workers x 1 replicas, this iterator has 1 x 2");
}

}  // namespace
}  // namespace troupe::testing
