// Foreign, malformed, duplicated and out-of-order messages are rejected with errors naming them;
// misuse of the interface (bad spec, double start, early result) is named too.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "collective_test_support.hpp"
#include "core/collective/hierarchical_copy.hpp"
#include "core/collective/reduce_to_one.hpp"
#include "core/collective/ring_all_reduce.hpp"

namespace troupe {
namespace {

using testing::closed_form_tensor;
using ::testing::HasSubstr;
using testing::make_peers;

// Runs `fn` and asserts it throws troupe::Error with `code` whose text contains every fragment.
template <class Fn>
void expect_error(Fn fn, Code code, std::initializer_list<std::string> fragments) {
  try {
    fn();
    FAIL() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const auto& f : fragments) EXPECT_THAT(e.what(), HasSubstr(f));
  }
}

CollectiveSpec small_spec(int rank, int n, int64_t count = 12) {
  CollectiveSpec spec;
  spec.rank = rank;
  spec.group_size = n;
  spec.count = count;
  spec.chunk_bytes = 8;  // two float32 per chunk
  spec.instance = 7;
  spec.reduce = &testing::add_loop;
  return spec;
}

// A well-formed message (header consistent with its payload) from `from` to `to`.
CollectiveMessage message(int from, int to, CollectivePhase phase, int step, int chunk,
                          int64_t offset, int64_t count, int64_t instance = 7) {
  CollectiveMessage m;
  m.instance = instance;
  m.from = from;
  m.to = to;
  m.phase = phase;
  m.step = step;
  m.chunk = chunk;
  m.offset = offset;
  m.count = count;
  m.payload = Tensor::zeros(DType::float32, Shape{count});
  return m;
}

// Ring n=3, 12 floats: segments [0,4) [4,8) [8,12), chunks of 2. Rank 1's left is rank 0;
// reduce_scatter step 0 into rank 1 carries segment 0, all_gather step 1 carries segment 0.
class RingValidation : public ::testing::Test {
 protected:
  RingValidation() : ring(small_spec(1, 3)) {
    ring.start(closed_form_tensor(DType::float32, 1, 12));
  }
  RingAllReduce ring;
};

TEST_F(RingValidation, AcceptsWellFormedMessage) {
  auto out = ring.on_message(message(0, 1, CollectivePhase::reduce_scatter, 0, 0, 0, 2));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].describe(),
            "reduce_scatter step 1 chunk 0 [offset 0, count 2] from rank 1 to rank 2");
}

TEST_F(RingValidation, RejectsDuplicate) {
  auto m = message(0, 1, CollectivePhase::reduce_scatter, 0, 1, 2, 2);
  ring.on_message(m);
  expect_error([&] { ring.on_message(m); }, Code::invalid_argument,
               {"ring all-reduce rank 1: reduce_scatter step 0 chunk 1 [offset 2, count 2] from "
                "rank 0 to rank 1",
                "duplicate message"});
}

TEST_F(RingValidation, RejectsOutOfOrderAllGather) {
  // all_gather step 1 chunk 0 would overwrite segment 0 before its reduce_scatter partial was made.
  expect_error(
      [&] { ring.on_message(message(0, 1, CollectivePhase::all_gather, 1, 0, 0, 2)); },
      Code::invalid_argument,
      {"all_gather step 1 chunk 0", "out of order: arrived before reduce_scatter step 0 chunk 0"});
}

TEST_F(RingValidation, RejectsWrongPhase) {
  expect_error([&] { ring.on_message(message(0, 1, CollectivePhase::gather, 0, 0, 0, 2)); },
               Code::invalid_argument, {"gather step 0", "phase is not part of a ring all-reduce"});
}

TEST_F(RingValidation, RejectsWrongSender) {
  expect_error([&] { ring.on_message(message(2, 1, CollectivePhase::reduce_scatter, 0, 0, 0, 2)); },
               Code::invalid_argument,
               {"from rank 2", "only receives from its left neighbour, rank 0"});
}

TEST_F(RingValidation, RejectsStepChunkAndRangeOutsideSchedule) {
  expect_error([&] { ring.on_message(message(0, 1, CollectivePhase::reduce_scatter, 2, 0, 0, 2)); },
               Code::invalid_argument, {"step outside 0..1"});
  expect_error([&] { ring.on_message(message(0, 1, CollectivePhase::reduce_scatter, 0, 2, 0, 2)); },
               Code::invalid_argument, {"chunk 2", "chunk outside the segment's 2 chunks"});
  expect_error([&] { ring.on_message(message(0, 1, CollectivePhase::reduce_scatter, 0, 0, 1, 2)); },
               Code::invalid_argument, {"expected offset 0, count 2"});
}

TEST_F(RingValidation, RejectsForeignInstanceWrongRankAndBadPayload) {
  expect_error(
      [&] { ring.on_message(message(0, 1, CollectivePhase::reduce_scatter, 0, 0, 0, 2, 8)); },
      Code::invalid_argument, {"belongs to collective instance 8, this is instance 7"});
  expect_error([&] { ring.on_message(message(0, 2, CollectivePhase::reduce_scatter, 0, 0, 0, 2)); },
               Code::invalid_argument, {"to rank 2", "delivered to the wrong rank"});
  expect_error([&] { ring.on_message(message(5, 1, CollectivePhase::reduce_scatter, 0, 0, 0, 2)); },
               Code::invalid_argument, {"sender is not another member of the group"});
  auto m = message(0, 1, CollectivePhase::reduce_scatter, 0, 0, 0, 2);
  m.payload = Tensor::zeros(DType::int32, Shape{2});
  expect_error([&] { ring.on_message(m); }, Code::invalid_argument,
               {"payload int32[2] does not hold the header's 2 float32 elements"});
}

TEST(CollectiveMisuse, StartTwiceResultEarlyAndBadInput) {
  RingAllReduce ring(small_spec(0, 2));
  expect_error([&] { ring.result(); }, Code::failed_precondition,
               {"result() before the collective completed"});
  expect_error([&] { ring.start(closed_form_tensor(DType::float32, 0, 11)); },
               Code::invalid_argument,
               {"input float32[11] does not match the spec (float32, 12 elements)"});
  ring.start(closed_form_tensor(DType::float32, 0, 12));
  expect_error([&] { ring.start(closed_form_tensor(DType::float32, 0, 12)); },
               Code::failed_precondition, {"start() called twice"});
}

TEST(CollectiveMisuse, MessageAfterCompletionRejected) {
  RingAllReduce single(small_spec(0, 1));
  single.start(closed_form_tensor(DType::float32, 0, 12));
  ASSERT_TRUE(single.done());
  RingAllReduce pair(small_spec(1, 2, 0));
  pair.start(Tensor(DType::float32, Shape{0}));
  ASSERT_TRUE(pair.done());
  expect_error([&] { pair.on_message(message(0, 1, CollectivePhase::reduce_scatter, 0, 0, 0, 0)); },
               Code::invalid_argument, {"arrived after the collective completed"});
}

TEST(CollectiveMisuse, BadSpecsNamed) {
  auto spec = small_spec(0, 0);
  expect_error([&] { ReduceToOne r(spec); }, Code::invalid_argument,
               {"reduce-to-one: cannot reduce an empty group (group_size 0)"});
  spec = small_spec(3, 3);
  expect_error([&] { RingAllReduce r(spec); }, Code::invalid_argument,
               {"rank 3 outside group of size 3"});
  spec = small_spec(0, 3);
  spec.root = 3;
  expect_error([&] { ReduceToOne r(spec); }, Code::invalid_argument,
               {"reduce_to_device rank 3 outside group of size 3"});
  spec = small_spec(0, 3);
  spec.chunk_bytes = 0;
  expect_error([&] { RingAllReduce r(spec); }, Code::invalid_argument,
               {"chunk_bytes must be positive, got 0"});
  spec = small_spec(0, 3);
  spec.reduce = nullptr;
  expect_error([&] { HierarchicalCopy r(spec); }, Code::invalid_argument,
               {"no reduce function given"});
  spec = small_spec(0, 3);
  spec.count = -1;
  expect_error([&] { RingAllReduce r(spec); }, Code::invalid_argument,
               {"negative element count -1"});
}

TEST(CollectiveEarlyMessages, BufferedUntilStartThenProcessed) {
  // Rank 1 of a 2-ring gets rank 0's reduce_scatter before its own start().
  auto peers = make_peers(CrossDeviceOpKind::collective_all_reduce, 2, DType::float32, 4, 64);
  auto from0 = peers[0]->start(closed_form_tensor(DType::float32, 0, 4));
  ASSERT_EQ(from0.size(), 1u);
  EXPECT_TRUE(peers[1]->on_message(from0[0]).empty());
  EXPECT_FALSE(peers[1]->done());
  auto from1 = peers[1]->start(closed_form_tensor(DType::float32, 1, 4));
  ASSERT_EQ(from1.size(),
            2u);  // its own reduce_scatter, then the all_gather the early message enabled
  EXPECT_EQ(from1[0].phase, CollectivePhase::reduce_scatter);
  EXPECT_EQ(from1[1].phase, CollectivePhase::all_gather);
}

TEST(ReduceToOneValidation, RejectsBroadcastFromNonRootAndGatherToNonRoot) {
  auto spec = small_spec(1, 3, 4);
  spec.root = 0;
  ReduceToOne member(spec);
  expect_error([&] { member.on_message(message(2, 1, CollectivePhase::broadcast, 0, 0, 0, 2)); },
               Code::invalid_argument, {"broadcast must come from the root, rank 0"});
  expect_error([&] { member.on_message(message(2, 1, CollectivePhase::gather, 0, 0, 0, 2)); },
               Code::invalid_argument, {"is not the root and only receives broadcast"});
}

TEST(ReduceToOneValidation, RejectsDuplicateGatherAtRoot) {
  auto spec = small_spec(0, 3, 4);
  ReduceToOne root(spec);
  auto m = message(2, 0, CollectivePhase::gather, 0, 1, 2, 2);
  root.on_message(m);  // before start: kept for later, but still checked for duplicates
  expect_error([&] { root.on_message(m); }, Code::invalid_argument,
               {"gather step 0 chunk 1", "duplicate message"});
}

TEST(HierarchicalValidation, RejectsCrossBroadcastBeforePartialSent) {
  // n=4, index 0: groups {0,1} (main 0) and {2,3} (main 2). Rank 2 has not summed its group yet.
  HierarchicalCopy g1(small_spec(2, 4, 4));
  g1.start(closed_form_tensor(DType::float32, 2, 4));
  expect_error([&] { g1.on_message(message(0, 2, CollectivePhase::cross_broadcast, 0, 0, 0, 2)); },
               Code::invalid_argument,
               {"hierarchical copy rank 2: cross_broadcast",
                "out of order: arrived before g1_main sent its partial sum"});
}

TEST(HierarchicalValidation, RejectsMisroutedPhases) {
  HierarchicalCopy member(small_spec(1, 4, 4));
  expect_error([&] { member.on_message(message(0, 1, CollectivePhase::gather, 0, 0, 0, 2)); },
               Code::invalid_argument, {"gather must go from a group member to its group main"});
  expect_error([&] { member.on_message(message(2, 1, CollectivePhase::broadcast, 0, 0, 0, 2)); },
               Code::invalid_argument, {"broadcast must come from this rank's group main, rank 0"});
  HierarchicalCopy g0(small_spec(0, 4, 4));
  expect_error([&] { g0.on_message(message(3, 0, CollectivePhase::cross_reduce, 0, 0, 0, 2)); },
               Code::invalid_argument,
               {"cross_reduce must go from g1_main (rank 2) to g0_main (rank 0)"});
  expect_error([&] { g0.on_message(message(1, 0, CollectivePhase::all_gather, 0, 0, 0, 2)); },
               Code::invalid_argument, {"phase is not part of a hierarchical copy"});
}

}  // namespace
}  // namespace troupe
