// all_finite consults what the in-process all-reduce learnt while writing its result: a buffer
// known to be all finite answers without a scan, for the result and every view of it; a buffer
// known not to be all finite, or one that knows nothing, is scanned view by view.

#include <gtest/gtest.h>

#include <cfloat>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "core/collective/shared_memory_all_reduce.hpp"
#include "kernels/host_accumulate.hpp"
#include "train/non_finite.hpp"

using namespace troupe;
using namespace std::chrono_literals;

namespace {

const float kNan = std::numeric_limits<float>::quiet_NaN();

/// The sum of `inputs` over as many threads through SharedMemoryAllReduce (the kernels' adds).
Tensor all_reduce(const std::vector<Tensor>& inputs) {
  SharedMemoryAllReduce group(int(inputs.size()), "non-finite shortcut test");
  std::vector<Tensor> results(inputs.size());
  std::vector<std::thread> threads;
  for (size_t r = 0; r < inputs.size(); ++r)
    threads.emplace_back([&, r] {
      results[r] = group.run(int(r), inputs[r], {host_accumulate, host_add_into, false}, 30s);
    });
  for (auto& t : threads) t.join();
  return results.at(0);
}

/// Rows x 4 float32 of `value`.
Tensor rows_of(int64_t rows, float value) { return Tensor::filled<float>(Shape{rows, 4}, value); }

/// A shared result whose buffer says `known` about values that include a NaN at row `nan_row`:
/// what all_finite answers then shows whether it read the bytes.
Tensor marked_result_with_nan(Finiteness known, int64_t nan_row) {
  Tensor t = rows_of(8, 1.0f);
  t.data<float>()[nan_row * 4] = kNan;
  t.buffer()->mark_shared_result(known);
  return t;
}

}  // namespace

TEST(NonFiniteShortcut, AllReduceResultAnswersAllFinite) {
  Tensor ok = all_reduce({rows_of(5000, 1.0f), rows_of(5000, 2.0f)});
  EXPECT_EQ(ok.buffer()->finiteness(), Finiteness::all_finite);
  EXPECT_TRUE(all_finite(ok));

  Tensor bad_input = rows_of(5000, 2.0f);
  bad_input.data<float>()[17] = kNan;
  Tensor with_nan = all_reduce({rows_of(5000, 1.0f), bad_input});
  EXPECT_EQ(with_nan.buffer()->finiteness(), Finiteness::not_all_finite);
  EXPECT_FALSE(all_finite(with_nan));

  Tensor inf_input = rows_of(5000, 2.0f);
  inf_input.data<float>()[19999] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(all_finite(all_reduce({rows_of(5000, 1.0f), inf_input})));

  Tensor overflow = all_reduce({rows_of(5000, FLT_MAX), rows_of(5000, FLT_MAX)});
  EXPECT_EQ(overflow.buffer()->finiteness(), Finiteness::not_all_finite);
  EXPECT_FALSE(all_finite(overflow));
}

TEST(NonFiniteShortcut, KnownFiniteBufferIsNotScannedForAnyView) {
  // The bytes hold a NaN that only a scan would see: true here proves the fact answered.
  Tensor t = marked_result_with_nan(Finiteness::all_finite, 6);
  EXPECT_TRUE(all_finite(t));
  EXPECT_TRUE(all_finite(t.slice_rows(5, 7)));
  EXPECT_TRUE(all_finite(std::vector<Tensor>{t.slice_rows(0, 2), t.reshape(Shape{32})}));
}

TEST(NonFiniteShortcut, KnownNotFiniteBufferIsScannedViewByView) {
  Tensor t = marked_result_with_nan(Finiteness::not_all_finite, 6);
  EXPECT_FALSE(all_finite(t));
  EXPECT_TRUE(all_finite(t.slice_rows(0, 6)));  // the NaN is outside this view
  EXPECT_FALSE(all_finite(t.slice_rows(6, 7)));
}

TEST(NonFiniteShortcut, ACopyOnWriteOfAFiniteResultIsScannedAgain) {
  Tensor result = all_reduce({rows_of(100, 1.0f), rows_of(100, 2.0f)});
  Tensor view = result.slice_rows(10, 20);
  ASSERT_TRUE(all_finite(view));
  view.data<float>()[3] = kNan;  // a write copies the shared result first
  ASSERT_FALSE(view.shares_buffer_with(result));
  EXPECT_EQ(view.buffer()->finiteness(), Finiteness::unknown);
  EXPECT_FALSE(all_finite(view));
  EXPECT_TRUE(all_finite(result));
}

TEST(NonFiniteShortcut, UnmarkedBuffersAreScannedAsBefore) {
  Tensor shared_unknown = marked_result_with_nan(Finiteness::unknown, 2);
  EXPECT_FALSE(all_finite(shared_unknown));
  Tensor plain = rows_of(3, 0.5f);
  EXPECT_TRUE(all_finite(plain));
  plain.data<float>()[11] = -std::numeric_limits<float>::infinity();
  EXPECT_FALSE(all_finite(plain));
}
