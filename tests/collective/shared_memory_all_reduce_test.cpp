// SharedMemoryAllReduce: n threads meet in shared memory. Closed-form sums and means over group
// sizes {1,2,3,4,7} and counts {0,1,odd,large}; every rank reads the one result; inputs are never
// written; disagreement, a missing rank and abort() end in named errors for every rank.

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "collective_test_support.hpp"
#include "core/collective/shared_memory_all_reduce.hpp"

namespace troupe {
namespace {

using namespace std::chrono_literals;
using testing::add_into_loop;
using testing::closed_form_input;
using testing::closed_form_sum;
using testing::closed_form_tensor;
using testing::element;

/// Runs every rank on its own thread; rank r starts after r * stagger.
std::vector<Tensor> run_group(SharedMemoryAllReduce& group, const std::vector<Tensor>& inputs,
                              SharedMemoryReduce how, std::chrono::microseconds stagger = {}) {
  std::vector<Tensor> results(inputs.size());
  std::vector<std::string> errors(inputs.size());
  std::vector<std::thread> threads;
  for (size_t r = 0; r < inputs.size(); ++r)
    threads.emplace_back([&, r] {
      std::this_thread::sleep_for(stagger * int(r));
      try {
        results[r] = group.run(int(r), inputs[r], how, 10s);
      } catch (const Error& e) {
        errors[r] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (size_t r = 0; r < inputs.size(); ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
  return results;
}

using Case = std::tuple<int, int64_t, DType>;
class SharedMemoryAllReduceClosedForm : public ::testing::TestWithParam<Case> {};

TEST_P(SharedMemoryAllReduceClosedForm, SumAndMeanAgreeWithClosedForm) {
  auto [n, count, dtype] = GetParam();
  for (bool mean : {false, true}) {
    for (bool three_operand : {false, true}) {
      SharedMemoryAllReduce group(n, "test");
      std::vector<Tensor> inputs;
      for (int r = 0; r < n; ++r) inputs.push_back(closed_form_tensor(dtype, r, count));
      auto results = run_group(group, inputs,
                               {&testing::add_loop, three_operand ? &add_into_loop : nullptr, mean},
                               std::chrono::microseconds(three_operand ? 300 : 0));
      for (int r = 0; r < n; ++r) {
        ASSERT_EQ(results[size_t(r)].num_elements(), count);
        if (count > 0) {
          EXPECT_TRUE(results[size_t(r)].shares_buffer_with(results[0]));
        }
        for (int64_t i = 0; i < count; ++i) {
          double want = closed_form_sum(n, i);
          if (mean) want = is_floating(dtype) ? want / n : double(int64_t(want) / n);
          ASSERT_NEAR(element(results[size_t(r)], i), want, 1e-6 * want)
              << "rank " << r << " i " << i;
          ASSERT_EQ(element(inputs[size_t(r)], i), closed_form_input(r, i));
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Collective, SharedMemoryAllReduceClosedForm,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4, 7),
                                            ::testing::Values(int64_t(0), int64_t(1), int64_t(1001),
                                                              int64_t(1 << 18)),
                                            ::testing::Values(DType::float32, DType::int64)),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return "n" + std::to_string(std::get<0>(info.param)) + "_count" +
                                  std::to_string(std::get<1>(info.param)) + "_" +
                                  std::string(dtype_name(std::get<2>(info.param)));
                         });

// A list of tensors is summed as their concatenation, without packing them: element counts that
// put tensor boundaries inside segments and blocks (and an empty tensor) over every group size.
TEST(SharedMemoryAllReduce, ListOfTensorsSumsLikeTheirConcatenation) {
  const std::vector<int64_t> counts{3, 0, 1001, 40000, 7};
  for (int n : {1, 2, 3, 4, 7}) {
    for (bool mean : {false, true}) {
      SharedMemoryAllReduce group(n, "list");
      std::vector<std::vector<Tensor>> inputs(static_cast<size_t>(n));
      for (int r = 0; r < n; ++r) {
        int64_t offset = 0;
        for (int64_t c : counts) {  // element i of the concatenation is closed_form_input(r, i)
          Tensor t(DType::float32, Shape{c});
          for (int64_t i = 0; i < c; ++i)
            t.data<float>()[i] = float(closed_form_input(r, offset + i));
          inputs[size_t(r)].push_back(t);
          offset += c;
        }
      }
      std::vector<Tensor> results(static_cast<size_t>(n));
      std::vector<std::thread> threads;
      for (int r = 0; r < n; ++r)
        threads.emplace_back([&, r] {
          results[size_t(r)] =
              group.run(r, inputs[size_t(r)], {&testing::add_loop, &add_into_loop, mean}, 10s);
        });
      for (auto& t : threads) t.join();
      for (int r = 0; r < n; ++r) {
        ASSERT_EQ(results[size_t(r)].shape(), (Shape{3 + 1001 + 40000 + 7}));
        for (int64_t i = 0; i < results[size_t(r)].num_elements(); ++i) {
          double want = closed_form_sum(n, i) / (mean ? n : 1);
          ASSERT_NEAR(element(results[size_t(r)], i), want, 1e-6 * want)
              << "n " << n << " rank " << r << " i " << i;
        }
      }
    }
  }
}

TEST(SharedMemoryAllReduce, ListsThatDisagreeOrMixDtypesAreNamed) {
  {
    SharedMemoryAllReduce group(2, "lists");
    std::string error;
    std::thread first([&] {
      try {
        group.run(0, std::vector<Tensor>{Tensor::filled<float>({4}, 1.0f)},
                  {&testing::add_loop, nullptr, false}, 5s);
      } catch (const Error& e) {
        error = e.what();
      }
    });
    std::this_thread::sleep_for(20ms);
    EXPECT_THROW(group.run(1,
                           std::vector<Tensor>{Tensor::filled<float>({2}, 1.0f),
                                               Tensor::filled<float>({2}, 1.0f)},
                           {&testing::add_loop, nullptr, false}, 5s),
                 Error);
    first.join();
    EXPECT_NE(error.find("rank 1 passed 2 float32 tensor(s) of [2, 2] elements but an earlier "
                         "rank passed 1 float32 tensor(s) of [4] elements"),
              std::string::npos)
        << error;
  }
  SharedMemoryAllReduce group(1, "mixed");
  try {
    group.run(
        0, std::vector<Tensor>{Tensor::filled<float>({2}, 1.0f), Tensor::filled<int64_t>({2}, 1)},
        {&testing::add_loop, nullptr, false}, 5s);
    ADD_FAILURE() << "mixed dtypes were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("inputs mix float32 and int64"), std::string::npos)
        << e.what();
  }
}

TEST(SharedMemoryAllReduce, KeepsTheInputShape) {
  SharedMemoryAllReduce group(2, "shape");
  Tensor a = Tensor::filled<float>({2, 3}, 1.0f), b = Tensor::filled<float>({2, 3}, 2.0f);
  auto results = run_group(group, {a, b}, {&testing::add_loop, nullptr, false});
  EXPECT_EQ(results[1].shape(), (Shape{2, 3}));
  EXPECT_EQ(results[1].data<float>()[5], 3.0f);
}

TEST(SharedMemoryAllReduce, MissingRankIsNamedAfterTheTimeout) {
  SharedMemoryAllReduce group(3, "collective 4 at step 2");
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      try {
        group.run(r, Tensor::filled<float>({4}, 1.0f), {&testing::add_loop, nullptr, false}, 50ms);
      } catch (const Error& e) {
        errors[size_t(r)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    EXPECT_NE(e.find("collective 4 at step 2"), std::string::npos) << e;
    EXPECT_NE(e.find("rank(s) 2 did not arrive"), std::string::npos) << e;
  }
}

TEST(SharedMemoryAllReduce, RanksThatDisagreeOnTheElementCountAllFail) {
  SharedMemoryAllReduce group(2, "mismatch");
  std::vector<std::string> errors(2);
  std::thread first([&] {
    try {
      group.run(0, Tensor::filled<float>({4}, 1.0f), {&testing::add_loop, nullptr, false}, 5s);
    } catch (const Error& e) {
      errors[0] = e.what();
    }
  });
  std::this_thread::sleep_for(20ms);
  try {
    group.run(1, Tensor::filled<float>({5}, 1.0f), {&testing::add_loop, nullptr, false}, 5s);
  } catch (const Error& e) {
    errors[1] = e.what();
  }
  first.join();
  const std::string want =
      "rank 1 passed 1 float32 tensor(s) of [5] elements but an earlier rank passed 1 float32 "
      "tensor(s) of [4] elements";
  EXPECT_NE(errors[1].find(want), std::string::npos) << errors[1];
  EXPECT_NE(errors[0].find(want), std::string::npos) << errors[0];
}

TEST(SharedMemoryAllReduce, AbortWakesWaitersWithTheReason) {
  SharedMemoryAllReduce group(2, "abort");
  std::string error;
  std::thread waiter([&] {
    try {
      group.run(0, Tensor::filled<float>({4}, 1.0f), {&testing::add_loop, nullptr, false}, 30s);
    } catch (const Error& e) {
      error = e.what();
    }
  });
  std::this_thread::sleep_for(20ms);
  group.abort("replica 1 failed: boom");
  waiter.join();
  EXPECT_NE(error.find("aborted: replica 1 failed: boom"), std::string::npos) << error;
  EXPECT_THROW(
      group.run(1, Tensor::filled<float>({4}, 1.0f), {&testing::add_loop, nullptr, false}, 1s),
      Error);
}

TEST(SharedMemoryAllReduce, RejectsBadRanksAndMissingReduceFunction) {
  SharedMemoryAllReduce group(2, "bad");
  EXPECT_THROW(
      group.run(2, Tensor::filled<float>({1}, 1.0f), {&testing::add_loop, nullptr, false}, 1s),
      Error);
  EXPECT_THROW(group.run(0, Tensor::filled<float>({1}, 1.0f), {nullptr, nullptr, false}, 1s),
               Error);
  EXPECT_THROW(SharedMemoryAllReduce(0, "empty"), Error);
}

}  // namespace
}  // namespace troupe
