// Every CPU all-reduce state machine over group sizes {1,2,3,4,7}, counts {0,1,odd,large} and all
// four dtypes, against closed-form sums, delivered FIFO and in seeded random interleavings.

#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "collective_test_support.hpp"
#include "core/collective/hierarchical_copy.hpp"

namespace troupe {
namespace {

using testing::closed_form_sum;
using testing::closed_form_tensor;
using testing::element;
using testing::make_peers;

double closed_form_input_value(int rank, int64_t i) { return testing::closed_form_input(rank, i); }

using Case = std::tuple<CrossDeviceOpKind, int, int64_t, DType>;

std::string kind_label(CrossDeviceOpKind kind) {
  switch (kind) {
    case CrossDeviceOpKind::collective_all_reduce: return "Ring";
    case CrossDeviceOpKind::reduction_to_one_device: return "ReduceToOne";
    case CrossDeviceOpKind::hierarchical_copy: return "HierarchicalCopy";
    default: return "Other";
  }
}

// Small chunks everywhere so that even 1001 elements travel as dozens of chunks per segment.
int64_t chunk_bytes_for(int64_t count) { return count <= 1001 ? 24 : 64 * 1024; }

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  auto [kind, n, count, dtype] = info.param;
  return kind_label(kind) + "_n" + std::to_string(n) + "_count" + std::to_string(count) + "_" +
         std::string(dtype_name(dtype));
}

class AllReduceAlgorithms : public ::testing::TestWithParam<Case> {
 protected:
  void run_and_check(bool random_order, uint64_t seed) {
    auto [kind, n, count, dtype] = GetParam();
    auto peers = make_peers(kind, n, dtype, count, chunk_bytes_for(count), /*root=*/n - 1,
                            /*tensor_index=*/count % 5);
    std::vector<Tensor> inputs;
    for (int r = 0; r < n; ++r) inputs.push_back(closed_form_tensor(dtype, r, count));
    auto results = run_locally(peers, inputs, {random_order, seed});
    ASSERT_EQ(results.size(), size_t(n));
    for (int r = 0; r < n; ++r) {
      ASSERT_EQ(results[r].shape(), Shape{count}) << "rank " << r;
      ASSERT_EQ(results[r].dtype(), dtype);
      for (int64_t i = 0; i < count; ++i)
        ASSERT_EQ(element(results[r], i), closed_form_sum(n, i))
            << "rank " << r << " element " << i;
    }
    // Inputs are left untouched (the ring works on a copy, the others only read them).
    for (int r = 0; r < n; ++r)
      EXPECT_TRUE(inputs[r].bitwise_equal(closed_form_tensor(dtype, r, count))) << "rank " << r;
  }
};

TEST_P(AllReduceAlgorithms, ClosedFormSumFifo) { run_and_check(false, 0); }
TEST_P(AllReduceAlgorithms, ClosedFormSumRandomInterleaving) { run_and_check(true, 12345); }

INSTANTIATE_TEST_SUITE_P(
    Collective, AllReduceAlgorithms,
    ::testing::Combine(
        ::testing::Values(CrossDeviceOpKind::collective_all_reduce,
                          CrossDeviceOpKind::reduction_to_one_device,
                          CrossDeviceOpKind::hierarchical_copy),
        ::testing::Values(1, 2, 3, 4, 7),
        ::testing::Values(int64_t(0), int64_t(1), int64_t(1001), int64_t((1 << 20) + 3)),
        ::testing::Values(DType::float32, DType::float64, DType::int32, DType::int64)),
    case_name);

// Non-integer floats: the sum order is fixed by the schedule, so every rank and every
// interleaving gives the same bits, and the value matches a double reference.
class AllReduceDeterminism : public ::testing::TestWithParam<CrossDeviceOpKind> {};

TEST_P(AllReduceDeterminism, BitIdenticalAcrossRanksAndInterleavings) {
  const int n = 7;
  const int64_t count = 4099;
  std::vector<Tensor> inputs;
  for (int r = 0; r < n; ++r) inputs.push_back(Tensor::random_normal(Shape{count}, 100 + r));
  std::vector<double> reference(count, 0.0);
  for (int r = 0; r < n; ++r)
    for (int64_t i = 0; i < count; ++i) reference[i] += inputs[r].data<float>()[i];
  Tensor first;
  for (uint64_t seed = 0; seed < 6; ++seed) {
    auto peers = make_peers(GetParam(), n, DType::float32, count, 256, 3, 5);
    auto results = run_locally(peers, inputs, {seed != 0, seed});
    if (!first.defined()) first = results[0];
    for (int r = 0; r < n; ++r)
      ASSERT_TRUE(results[r].bitwise_equal(first)) << "rank " << r << " seed " << seed;
  }
  for (int64_t i = 0; i < count; ++i)
    ASSERT_NEAR(first.data<float>()[i], reference[i], 1e-5 * (1 + std::fabs(reference[i])));
}

INSTANTIATE_TEST_SUITE_P(Collective, AllReduceDeterminism,
                         ::testing::Values(CrossDeviceOpKind::collective_all_reduce,
                                           CrossDeviceOpKind::reduction_to_one_device,
                                           CrossDeviceOpKind::hierarchical_copy),
                         [](const auto& info) { return kind_label(info.param); });

TEST(AllReduce, ResultKeepsInputShapeIncludingScalarsAndEmpty) {
  for (Shape shape : {Shape{3, 5}, Shape{}, Shape{0, 4}, Shape{2, 1, 3}}) {
    int64_t count = shape.num_elements();
    for (auto kind :
         {CrossDeviceOpKind::collective_all_reduce, CrossDeviceOpKind::reduction_to_one_device,
          CrossDeviceOpKind::hierarchical_copy}) {
      auto peers = make_peers(kind, 3, DType::float64, count, 8);
      std::vector<Tensor> inputs;
      for (int r = 0; r < 3; ++r)
        inputs.push_back(closed_form_tensor(DType::float64, r, count).reshape(shape));
      auto results = run_locally(peers, inputs);
      for (const auto& t : results) {
        ASSERT_EQ(t.shape(), shape) << kind_label(kind);
        for (int64_t i = 0; i < count; ++i) EXPECT_EQ(element(t, i), closed_form_sum(3, i));
      }
    }
  }
}

TEST(AllReduce, VectorExampleFromSpec) {
  // mirrored.md §3.2: [1,2] and [3,4] -> SUM [4,6] (MEAN [2,3] is the caller's division).
  for (auto kind :
       {CrossDeviceOpKind::collective_all_reduce, CrossDeviceOpKind::reduction_to_one_device,
        CrossDeviceOpKind::hierarchical_copy}) {
    auto peers = make_peers(kind, 2, DType::float32, 2, 4);
    auto results = run_locally(
        peers, {Tensor::from_vector<float>({2}, {1, 2}), Tensor::from_vector<float>({2}, {3, 4})});
    EXPECT_EQ(results[0].to_vector<float>(), (std::vector<float>{4, 6}));
    EXPECT_EQ(results[1].to_vector<float>(), (std::vector<float>{4, 6}));
  }
}

TEST(AllReduce, RingChunksPipelineAndMessageCount) {
  // n=4, 40 float32 = 4 segments of 10, chunk 8 bytes = 2 elements -> 5 chunks per segment;
  // 2 phases x 3 steps x 5 chunks x 4 ranks = 120 messages of 2 elements.
  auto peers = make_peers(CrossDeviceOpKind::collective_all_reduce, 4, DType::float32, 40, 8);
  std::vector<Tensor> inputs;
  for (int r = 0; r < 4; ++r) inputs.push_back(closed_form_tensor(DType::float32, r, 40));
  LocalDriverStats stats;
  run_locally(peers, inputs, {}, &stats);
  EXPECT_EQ(stats.messages, 120);
  EXPECT_EQ(stats.payload_bytes, 120 * 8);
}

TEST(AllReduce, RandomDriverDeliversBeforeStartAndStillAgrees) {
  // The random driver must really exercise early messages, or the interleaving tests prove little.
  int64_t early = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    for (auto kind :
         {CrossDeviceOpKind::collective_all_reduce, CrossDeviceOpKind::reduction_to_one_device,
          CrossDeviceOpKind::hierarchical_copy}) {
      auto peers = make_peers(kind, 4, DType::int64, 33, 16);
      std::vector<Tensor> inputs;
      for (int r = 0; r < 4; ++r) inputs.push_back(closed_form_tensor(DType::int64, r, 33));
      LocalDriverStats stats;
      auto results = run_locally(peers, inputs, {true, seed}, &stats);
      early += stats.early_messages;
      for (int64_t i = 0; i < 33; ++i) ASSERT_EQ(element(results[3], i), closed_form_sum(4, i));
    }
  }
  EXPECT_GT(early, 0);
}

TEST(AllReduce, DriverRejectsInputCountMismatch) {
  auto peers = make_peers(CrossDeviceOpKind::collective_all_reduce, 2, DType::float32, 4, 16);
  EXPECT_THROW(run_locally(peers, {closed_form_tensor(DType::float32, 0, 4)}), Error);
}

TEST(AllReduce, RingFirstMessagesAreViewsNotCopies) {
  auto peers = make_peers(CrossDeviceOpKind::collective_all_reduce, 2, DType::float32, 8, 16);
  Tensor input0 = closed_form_tensor(DType::float32, 0, 8);
  auto out = peers[0]->start(input0);
  ASSERT_EQ(out.size(), 1u);  // segment 0 = 4 elements = one 16-byte chunk
  // The ring only reads its input: step 0 sends a view of it, no private copy first.
  EXPECT_TRUE(out[0].payload.shares_buffer_with(input0));
  auto out2 = peers[0]->on_message(peers[1]->start(closed_form_tensor(DType::float32, 1, 8))[0]);
  ASSERT_EQ(out2.size(), 1u);
  EXPECT_FALSE(out2[0].payload.shares_buffer_with(input0));
  EXPECT_EQ(element(input0, 4), closed_form_input_value(0, 4));
}

}  // namespace
}  // namespace troupe
