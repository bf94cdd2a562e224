// The element-wise kernels built for AVX2 (kernels/cpu/simd_level.hpp) against a scalar
// reference and the baseline build: bitwise equal, in place and out of place, on sizes that leave
// vector remainders.

#include <cstring>
#include <limits>
#include <vector>

#include "kernel_test_util.hpp"
#include "kernels/cpu/cpu_kernels.hpp"

namespace troupe {
namespace {

using cpu::SimdLevel;

TEST(SimdLevel, DetectedLevelFollowsTheCpu) {
  const bool avx2 = __builtin_cpu_supports("avx2");
  EXPECT_EQ(cpu::detected_simd_level(), avx2 ? SimdLevel::avx2 : SimdLevel::baseline);
  EXPECT_STREQ(cpu::simd_level_name(SimdLevel::avx2), "avx2");
  EXPECT_STREQ(cpu::simd_level_name(SimdLevel::baseline), "baseline");
}

// Exact equality, NaN included: the variants run the same operations.
template <class T>
void expect_bitwise_equal(const std::vector<T>& expected, const Tensor& actual) {
  ASSERT_EQ(size_t(actual.num_elements()), expected.size());
  if (expected.empty()) return;  // memcmp must not see the null data() of an empty vector
  EXPECT_EQ(std::memcmp(expected.data(), actual.data<T>(), expected.size() * sizeof(T)), 0);
}

class SimdVariants : public ::testing::TestWithParam<SimdLevel> {
 protected:
  void SetUp() override {
    if (GetParam() == SimdLevel::avx2 && !__builtin_cpu_supports("avx2"))
      GTEST_SKIP() << "this CPU has no AVX2";
    cpu::register_elementwise(registry, GetParam());
    cpu::register_nn(registry, GetParam());
  }
  KernelRegistry registry;
  Ops ops{registry};
};

// Values with both signs, zeros of both signs and a NaN, so the selects see every case.
template <class T>
Tensor mixed_values(int64_t n, uint64_t seed) {
  Tensor t = Tensor::random_uniform({n}, seed, -1, 1, dtype_of<T>());
  T* p = t.data<T>();
  if (n > 2) p[1] = T(-0.0);
  if (n > 3) p[2] = T(0);
  if (n > 5) p[n - 2] = std::numeric_limits<T>::quiet_NaN();
  return t;
}

template <class T>
void check_relu_family(const Ops& ops) {
  for (int64_t n : {0, 1, 3, 7, 8, 9, 31, 33, 1027}) {
    SCOPED_TRACE(::testing::Message() << dtype_name(dtype_of<T>()) << " n=" << n);
    Tensor x = mixed_values<T>(n, 1), g = mixed_values<T>(n, 2);
    std::vector<T> relu(static_cast<size_t>(n)), relu_grad(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const T xi = x.data<T>()[i];
      relu[size_t(i)] = xi > T(0) ? xi : T(0);
      relu_grad[size_t(i)] = xi > T(0) ? g.data<T>()[i] : T(0);
    }
    Tensor out(dtype_of<T>(), {n});
    ops.relu(x, out);
    expect_bitwise_equal(relu, out);
    Tensor in_place = x.clone();
    ops.relu(in_place, in_place);
    expect_bitwise_equal(relu, in_place);
    ops.relu_grad(g, x, out);
    expect_bitwise_equal(relu_grad, out);
    Tensor grads_in_place = g.clone();
    ops.relu_grad(grads_in_place, x, grads_in_place);
    expect_bitwise_equal(relu_grad, grads_in_place);
  }
}

TEST_P(SimdVariants, ReluAndReluGradMatchTheScalarReferenceBitwise) {
  check_relu_family<float>(ops);
  check_relu_family<double>(ops);
}

template <class T>
void check_bias_add(const Ops& ops) {
  for (auto [rows, cols] :
       {std::pair<int64_t, int64_t>{1, 1}, {3, 7}, {5, 17}, {128, 256}, {2, 1027}, {0, 4}}) {
    SCOPED_TRACE(::testing::Message() << dtype_name(dtype_of<T>()) << " " << rows << "x" << cols);
    Tensor value = Tensor::random_uniform({rows, cols}, 3, -1, 1, dtype_of<T>());
    Tensor bias = Tensor::random_uniform({cols}, 4, -1, 1, dtype_of<T>());
    std::vector<T> expected(size_t(rows * cols));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        expected[size_t(r * cols + c)] = value.data<T>()[r * cols + c] + bias.data<T>()[c];
    Tensor out(dtype_of<T>(), {rows, cols});
    ops.bias_add(value, bias, out);
    expect_bitwise_equal(expected, out);
    ops.bias_add(value, bias, value);
    expect_bitwise_equal(expected, value);
  }
}

TEST_P(SimdVariants, BiasAddMatchesTheScalarReferenceBitwise) {
  check_bias_add<float>(ops);
  check_bias_add<double>(ops);
}

INSTANTIATE_TEST_SUITE_P(Levels, SimdVariants,
                         ::testing::Values(SimdLevel::baseline, SimdLevel::avx2),
                         [](const auto& info) { return cpu::simd_level_name(info.param); });

}  // namespace
}  // namespace troupe
