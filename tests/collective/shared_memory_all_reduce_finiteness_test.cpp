// SharedMemoryAllReduce records on its result buffer whether every value is finite: each rank
// scans the blocks of its segment as it writes them. A NaN or Inf in any rank's input, or a sum
// that overflows, makes the whole result "not all finite"; finite sums say "all finite"; integer
// results stay unknown. The fact belongs to the buffer: a copy made on write knows nothing.

#include <gtest/gtest.h>

#include <atomic>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "collective_test_support.hpp"
#include "core/collective/shared_memory_all_reduce.hpp"

namespace troupe {
namespace {

using namespace std::chrono_literals;

// More than one block (16 Ki elements) per segment with 3 ranks, and a ragged tail.
constexpr int64_t kCount = 3 * 2 * 16 * 1024 + 5;

/// A ReduceIntoFiniteFn for floats (the kernel layer's add_into_finite_loop is out of this
/// layer's reach): the sum, and whether every sum is finite.
bool add_into_finite_loop(void* dst, const void* a, const void* b, DType dtype, int64_t n) {
  bool finite = true;
  auto sum = [&](auto* d, const auto* x, const auto* y) {
    for (int64_t i = 0; i < n; ++i) {
      d[i] = x[i] + y[i];
      finite = finite && std::isfinite(d[i]);
    }
  };
  if (dtype == DType::float32)
    sum(static_cast<float*>(dst), static_cast<const float*>(a), static_cast<const float*>(b));
  else
    sum(static_cast<double*>(dst), static_cast<const double*>(a), static_cast<const double*>(b));
  return finite;
}

/// Runs every rank on its own thread; asserts that all return the one result buffer. `fused`:
/// the sum's own pass says whether it is finite (2 ranks, as the replicas run it).
Tensor run_group(const std::vector<Tensor>& inputs, bool mean, ReduceIntoFiniteFn fused = nullptr) {
  SharedMemoryAllReduce group(int(inputs.size()), "finiteness test");
  std::vector<Tensor> results(inputs.size());
  std::vector<std::string> errors(inputs.size());
  std::vector<std::thread> threads;
  for (size_t r = 0; r < inputs.size(); ++r)
    threads.emplace_back([&, r] {
      try {
        results[r] = group.run(int(r), inputs[r], {&testing::add_loop, nullptr, mean, fused}, 30s);
      } catch (const Error& e) {
        errors[r] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (size_t r = 0; r < inputs.size(); ++r) {
    EXPECT_EQ(errors[r], "") << "rank " << r;
    EXPECT_TRUE(results[r].shares_buffer_with(results[0])) << "rank " << r;
  }
  return results.at(0);
}

std::vector<Tensor> finite_inputs(DType dtype, int ranks, int64_t count) {
  std::vector<Tensor> inputs;
  for (int r = 0; r < ranks; ++r) inputs.push_back(testing::closed_form_tensor(dtype, r, count));
  return inputs;
}

template <class T>
void set_element(Tensor& t, int64_t i, T value) {
  t.data<T>()[i] = value;
}

template <class T>
void expect_bad_value_marks_result(DType dtype, T bad) {
  const int ranks = 3;
  // Positions in the first, middle and last rank's segment, at block edges and in the tail.
  for (int64_t at : {int64_t(0), int64_t(16 * 1024), kCount / 2, kCount - 1}) {
    for (int bad_rank = 0; bad_rank < ranks; ++bad_rank) {
      for (bool mean : {false, true}) {
        auto inputs = finite_inputs(dtype, ranks, kCount);
        set_element<T>(inputs[size_t(bad_rank)], at, bad);
        Tensor result = run_group(inputs, mean);
        ASSERT_TRUE(result.is_shared_result());
        EXPECT_EQ(result.buffer()->finiteness(), Finiteness::not_all_finite)
            << "value " << bad << " at " << at << " in rank " << bad_rank << " mean " << mean;
      }
    }
  }
}

TEST(SharedMemoryAllReduceFiniteness, NanInOneRanksInputMarksTheResultNotFinite) {
  expect_bad_value_marks_result<float>(DType::float32, std::numeric_limits<float>::quiet_NaN());
  expect_bad_value_marks_result<double>(DType::float64, std::numeric_limits<double>::quiet_NaN());
}

TEST(SharedMemoryAllReduceFiniteness, InfInOneRanksInputMarksTheResultNotFinite) {
  expect_bad_value_marks_result<float>(DType::float32, std::numeric_limits<float>::infinity());
  expect_bad_value_marks_result<double>(DType::float64, -std::numeric_limits<double>::infinity());
}

TEST(SharedMemoryAllReduceFiniteness, FiniteInputsMarkTheResultAllFinite) {
  for (DType dtype : {DType::float32, DType::float64})
    for (int ranks : {1, 2, 3, 4})
      for (bool mean : {false, true}) {
        Tensor result = run_group(finite_inputs(dtype, ranks, kCount), mean);
        EXPECT_EQ(result.buffer()->finiteness(), Finiteness::all_finite)
            << dtype_name(dtype) << " ranks " << ranks << " mean " << mean;
      }
}

TEST(SharedMemoryAllReduceFiniteness, FiniteValuesWhoseSumOverflowsMarkItNotFinite) {
  for (bool mean : {false, true}) {
    std::vector<Tensor> inputs;
    for (int r = 0; r < 2; ++r) {
      inputs.push_back(Tensor::filled<float>(Shape{kCount}, 1.0f));
      set_element<float>(inputs.back(), kCount - 3, FLT_MAX);  // FLT_MAX + FLT_MAX = +Inf
    }
    const Tensor result = run_group(inputs, mean);  // const: reading must not copy it
    EXPECT_TRUE(std::isinf(result.data<float>()[kCount - 3]));
    EXPECT_EQ(result.buffer()->finiteness(), Finiteness::not_all_finite) << "mean " << mean;
  }
}

TEST(SharedMemoryAllReduceFiniteness, TwoRanksLearnItInTheSumsOwnPassWithTheSameBytes) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (bool mean : {false, true}) {
    const auto inputs = finite_inputs(DType::float32, 2, kCount);
    Tensor fused = run_group(inputs, mean, add_into_finite_loop);
    EXPECT_EQ(fused.buffer()->finiteness(), Finiteness::all_finite) << "mean " << mean;
    EXPECT_TRUE(fused.bitwise_equal(run_group(inputs, mean))) << "mean " << mean;
    for (int64_t at : {int64_t(0), int64_t(16 * 1024 - 1), kCount / 2, kCount - 1})
      for (float bad : {nan, std::numeric_limits<float>::infinity(), FLT_MAX}) {
        auto with_bad = finite_inputs(DType::float32, 2, kCount);
        set_element<float>(with_bad[1], at, bad);
        if (bad == FLT_MAX) set_element<float>(with_bad[0], at, FLT_MAX);  // overflows to +Inf
        EXPECT_EQ(run_group(with_bad, mean, add_into_finite_loop).buffer()->finiteness(),
                  Finiteness::not_all_finite)
            << bad << " at " << at << " mean " << mean;
      }
  }
  auto doubles = finite_inputs(DType::float64, 2, kCount);
  set_element<double>(doubles[0], kCount - 1, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(run_group(doubles, false, add_into_finite_loop).buffer()->finiteness(),
            Finiteness::not_all_finite);
}

// Counts the blocks summed through it, then sums as add_into_finite_loop (the kernel layer's
// streaming sum gives the same bits: HostAccumulate.Streaming* in test_kernels).
std::atomic<int> streamed_blocks{0};
bool counting_streaming_sum(void* dst, const void* a, const void* b, DType dtype, int64_t n) {
  streamed_blocks.fetch_add(1);
  return add_into_finite_loop(dst, a, b, dtype, n);
}

Tensor run_pair_streaming(const std::vector<Tensor>& inputs, int64_t streaming_min_bytes) {
  SharedMemoryAllReduce group(2, "streaming test");
  SharedMemoryReduce how{
      &testing::add_loop, nullptr, false, add_into_finite_loop, counting_streaming_sum,
      streaming_min_bytes};
  Tensor results[2];
  std::thread other([&] { results[1] = group.run(1, inputs[1], how, 30s); });
  results[0] = group.run(0, inputs[0], how, 30s);
  other.join();
  EXPECT_TRUE(results[1].shares_buffer_with(results[0]));
  return results[0];
}

TEST(SharedMemoryAllReduceFiniteness, ResultsOfAtLeastTheStreamingSizeSumThroughTheStreamingFn) {
  const auto inputs = finite_inputs(DType::float32, 2, kCount);
  const int64_t bytes = kCount * 4;
  const Tensor cached = run_group(inputs, false, add_into_finite_loop);
  for (int64_t threshold : {int64_t(0), bytes + 1}) {  // 0: never; above the result: not here
    streamed_blocks = 0;
    EXPECT_TRUE(run_pair_streaming(inputs, threshold).bitwise_equal(cached));
    EXPECT_EQ(streamed_blocks.load(), 0) << "threshold " << threshold;
  }
  for (int64_t threshold : {bytes, int64_t(1)}) {
    streamed_blocks = 0;
    Tensor streamed = run_pair_streaming(inputs, threshold);
    EXPECT_TRUE(streamed.bitwise_equal(cached));
    EXPECT_EQ(streamed.buffer()->finiteness(), Finiteness::all_finite);
    EXPECT_GE(streamed_blocks.load(), 2) << "every block of both segments, threshold " << threshold;
  }
  auto with_nan = inputs;
  set_element<float>(with_nan[0], kCount - 1, std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(run_pair_streaming(with_nan, 1).buffer()->finiteness(), Finiteness::not_all_finite);
}

TEST(SharedMemoryAllReduceFiniteness, IntegerResultsStayUnknown) {
  for (DType dtype : {DType::int32, DType::int64}) {
    Tensor result = run_group(finite_inputs(dtype, 2, 1001), false);
    EXPECT_TRUE(result.is_shared_result());
    EXPECT_EQ(result.buffer()->finiteness(), Finiteness::unknown) << dtype_name(dtype);
  }
}

TEST(SharedMemoryAllReduceFiniteness, ACopyMadeOnWriteKnowsNothing) {
  const Tensor result = run_group(finite_inputs(DType::float32, 2, 1001), false);
  Tensor view = result.slice_rows(10, 20);
  ASSERT_TRUE(view.shares_buffer_with(result));
  EXPECT_EQ(view.buffer()->finiteness(), Finiteness::all_finite);
  view.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();  // copies first
  EXPECT_FALSE(view.shares_buffer_with(result));
  EXPECT_EQ(view.buffer()->finiteness(), Finiteness::unknown);
  EXPECT_FALSE(view.is_shared_result());
  EXPECT_EQ(result.buffer()->finiteness(), Finiteness::all_finite);
  EXPECT_FALSE(std::isnan(result.data<float>()[10]));
}

TEST(BufferFiniteness, KnownOnlyWithTheSharedResultMarkAndNeverContradicted) {
  auto buffer = Buffer::allocate_host(64);
  EXPECT_EQ(buffer->finiteness(), Finiteness::unknown);
  buffer->mark_shared_result();
  EXPECT_EQ(buffer->finiteness(), Finiteness::unknown);
  buffer->mark_shared_result(Finiteness::all_finite);
  EXPECT_TRUE(buffer->shared_result());
  buffer->mark_shared_result(Finiteness::all_finite);  // every rank marks the same fact
  buffer->mark_shared_result(Finiteness::unknown);     // keeps what is known
  buffer->mark_shared_result();
  EXPECT_EQ(buffer->finiteness(), Finiteness::all_finite);
  try {
    buffer->mark_shared_result(Finiteness::not_all_finite);
    FAIL() << "a contradicting fact was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::failed_precondition);
    EXPECT_NE(std::string(e.what()).find("already known all finite"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(buffer->finiteness(), Finiteness::all_finite);

  auto fresh = Buffer::allocate_host(64);
  fresh->mark_shared_result(Finiteness::not_all_finite);
  EXPECT_TRUE(fresh->shared_result());
  EXPECT_EQ(fresh->finiteness(), Finiteness::not_all_finite);
}

}  // namespace
}  // namespace troupe
