// The ring with one result buffer shared by every rank of a process
// (CollectiveSpec::shared_output): closed-form sums over group sizes {1,2,3,4,7} and counts
// {0,1,odd,large}, FIFO and random interleavings, with the three-operand add and with the copy +
// accumulate fallback; inputs are never written; every rank's result is the shared buffer itself.

#include <gtest/gtest.h>

#include <tuple>

#include "collective_test_support.hpp"

namespace troupe {
namespace {

using testing::add_into_loop;
using testing::closed_form_input;
using testing::closed_form_sum;
using testing::closed_form_tensor;
using testing::element;

struct RingRun {
  std::vector<Tensor> inputs, results;
  Tensor shared;
};

RingRun run_ring(int n, int64_t count, bool three_operand, bool random_order, uint64_t seed,
                 bool share) {
  RingRun run;
  if (share) run.shared = Tensor(DType::float32, Shape{count});
  std::vector<std::unique_ptr<CollectiveAlgorithm>> peers;
  for (int r = 0; r < n; ++r) {
    CollectiveSpec spec;
    spec.rank = r;
    spec.group_size = n;
    spec.count = count;
    spec.chunk_bytes = count <= 1001 ? 24 : 64 * 1024;
    spec.reduce = &testing::add_loop;
    spec.reduce_into = three_operand ? &add_into_loop : nullptr;
    spec.shared_output = run.shared;
    peers.push_back(make_collective(CrossDeviceOpKind::collective_all_reduce, spec));
    run.inputs.push_back(closed_form_tensor(DType::float32, r, count));
  }
  run.results = run_locally(peers, run.inputs, {random_order, seed});
  return run;
}

using Case = std::tuple<int, int64_t, bool>;

class RingSharedOutput : public ::testing::TestWithParam<Case> {};

TEST_P(RingSharedOutput, ClosedFormSumEveryRankReadsTheOneBuffer) {
  auto [n, count, three_operand] = GetParam();
  for (bool random_order : {false, true}) {
    auto run = run_ring(n, count, three_operand, random_order, 99, true);
    for (int r = 0; r < n; ++r) {
      const Tensor& result = run.results[size_t(r)];
      ASSERT_EQ(result.num_elements(), count);
      if (n > 1 && count > 0) {
        EXPECT_TRUE(result.shares_buffer_with(run.shared)) << "rank " << r;
      }
      for (int64_t i = 0; i < count; ++i)
        ASSERT_EQ(element(result, i), closed_form_sum(n, i)) << "rank " << r << " element " << i;
      for (int64_t i = 0; i < count; ++i)
        ASSERT_EQ(element(run.inputs[size_t(r)], i), closed_form_input(r, i))
            << "rank " << r << " input element " << i << " was written";
    }
  }
}

TEST_P(RingSharedOutput, PrivateOutputsMatchTheSharedOne) {
  auto [n, count, three_operand] = GetParam();
  auto shared = run_ring(n, count, three_operand, true, 7, true);
  auto separate = run_ring(n, count, three_operand, true, 7, false);
  for (int r = 0; r < n; ++r)
    for (int64_t i = 0; i < count; ++i)
      ASSERT_EQ(element(separate.results[size_t(r)], i), element(shared.results[0], i));
}

INSTANTIATE_TEST_SUITE_P(Collective, RingSharedOutput,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4, 7),
                                            ::testing::Values(int64_t(0), int64_t(1), int64_t(1001),
                                                              int64_t(1 << 18)),
                                            ::testing::Bool()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return "n" + std::to_string(std::get<0>(info.param)) + "_count" +
                                  std::to_string(std::get<1>(info.param)) +
                                  (std::get<2>(info.param) ? "_add_into" : "_copy_accumulate");
                         });

TEST(RingSharedOutput, RejectsABufferOfTheWrongSize) {
  CollectiveSpec spec;
  spec.group_size = 2;
  spec.count = 8;
  spec.reduce = &testing::add_loop;
  spec.shared_output = Tensor(DType::float32, Shape{7});
  try {
    make_collective(CrossDeviceOpKind::collective_all_reduce, spec);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("shared output"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace troupe
