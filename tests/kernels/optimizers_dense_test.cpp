// Dense optimizer updates: several steps against double references of TF's formulas.

#include "kernel_test_util.hpp"
#include "optimizer_reference.hpp"

namespace troupe {
namespace {

using testing::as_doubles;
using testing::expect_all_near;
using testing::KernelTest;

constexpr int kSteps = 5;
constexpr int64_t kSize = 37;

class DenseOptimizers : public KernelTest, public ::testing::WithParamInterface<DType> {
 protected:
  double tol() const { return GetParam() == DType::float32 ? 2e-5 : 1e-13; }
  Tensor var0() const { return Tensor::random_uniform({kSize}, 1, -1, 1, GetParam()); }
  // A different gradient each step.
  Tensor grad(int step) const {
    return Tensor::random_uniform({kSize}, 100 + step, -1, 1, GetParam());
  }
};

TEST_P(DenseOptimizers, SgdSeveralSteps) {
  Tensor var = var0();
  auto ref = as_doubles(var);
  for (int s = 0; s < kSteps; ++s) {
    Tensor g = grad(s);
    ops.apply_sgd(var, g, {0.1});
    auto vg = as_doubles(g);
    for (int64_t i = 0; i < kSize; ++i) testing::ref_sgd(ref[i], vg[i], 0.1);
  }
  expect_all_near(ref, var, tol());
}

TEST_P(DenseOptimizers, MomentumAndNesterovSeveralSteps) {
  for (bool nesterov : {false, true}) {
    Tensor var = var0(), accum = Tensor::zeros(GetParam(), {kSize});
    auto ref = as_doubles(var);
    std::vector<double> ref_accum(kSize, 0.0);
    for (int s = 0; s < kSteps; ++s) {
      Tensor g = grad(s);
      ops.apply_momentum(var, accum, g, {0.05, 0.9, nesterov});
      auto vg = as_doubles(g);
      for (int64_t i = 0; i < kSize; ++i)
        testing::ref_momentum(ref[i], ref_accum[i], vg[i], 0.05, 0.9, nesterov);
    }
    SCOPED_TRACE(nesterov ? "nesterov" : "plain");
    expect_all_near(ref, var, tol());
    expect_all_near(ref_accum, accum, tol());
  }
}

TEST_P(DenseOptimizers, AdamSeveralSteps) {
  Tensor var = var0(), m = Tensor::zeros(GetParam(), {kSize}),
         v = Tensor::zeros(GetParam(), {kSize});
  auto ref = as_doubles(var);
  std::vector<double> rm(kSize, 0.0), rv(kSize, 0.0);
  for (int s = 1; s <= kSteps; ++s) {
    Tensor g = grad(s);
    AdamOptions o;
    o.learning_rate = 0.01, o.step = s;
    ops.apply_adam(var, m, v, g, o);
    auto vg = as_doubles(g);
    for (int64_t i = 0; i < kSize; ++i)
      testing::ref_adam(ref[i], rm[i], rv[i], vg[i], 0.01, 0.9, 0.999, 1e-7, s);
  }
  expect_all_near(ref, var, tol());
  expect_all_near(rm, m, tol());
  expect_all_near(rv, v, tol());
}

TEST_P(DenseOptimizers, AdagradV2SeveralSteps) {
  Tensor var = var0();
  Tensor accum(GetParam(), {kSize});
  ops.fill(accum, 0.1);  // Keras' initial_accumulator_value
  auto ref = as_doubles(var);
  std::vector<double> ra(kSize, 0.1);
  if (GetParam() == DType::float32)
    for (auto& a : ra) a = double(0.1f);
  for (int s = 0; s < kSteps; ++s) {
    Tensor g = grad(s);
    ops.apply_adagrad(var, accum, g, {0.1, 1e-7});
    auto vg = as_doubles(g);
    for (int64_t i = 0; i < kSize; ++i) testing::ref_adagrad(ref[i], ra[i], vg[i], 0.1, 1e-7);
  }
  expect_all_near(ref, var, tol());
  expect_all_near(ra, accum, tol());
}

INSTANTIATE_TEST_SUITE_P(Dtypes, DenseOptimizers, ::testing::Values(DType::float32, DType::float64),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

class DenseOptimizerErrors : public KernelTest {};

TEST_F(DenseOptimizerErrors, FirstAdamStepMovesEveryWeightByLearningRate) {
  // At t = 1 Adam's update is lr * g / (|g| + eps'): a closed form independent of |g|.
  Tensor var = Tensor::zeros(DType::float64, {3});
  Tensor m = Tensor::zeros(DType::float64, {3}), v = Tensor::zeros(DType::float64, {3});
  Tensor g = Tensor::from_vector<double>({3}, {4.0, -0.5, 2.0});
  AdamOptions o;
  o.learning_rate = 0.1, o.epsilon = 0.0;
  ops.apply_adam(var, m, v, g, o);
  expect_all_near({-0.1, 0.1, -0.1}, var, 1e-12);
}

TEST_F(DenseOptimizerErrors, ShapeMismatchesNameTheSlots) {
  Tensor var(DType::float32, {4}), accum(DType::float32, {5}), g(DType::float32, {4});
  EXPECT_TROUPE_ERROR(ops.apply_momentum(var, accum, g, {}), Code::invalid_argument,
                      "apply_momentum: var float32[4] and accum float32[5] must have the same");
  Tensor g64(DType::float64, {4});
  EXPECT_TROUPE_ERROR(ops.apply_sgd(var, g64, {}), Code::invalid_argument,
                      "apply_sgd: var float32[4] and grad float64[4]");
  Tensor v(DType::float32, {3});
  EXPECT_TROUPE_ERROR(ops.apply_adam(var, var, v, g, {}), Code::invalid_argument,
                      "apply_adam: var float32[4] and v float32[3]");
  EXPECT_TROUPE_ERROR(ops.apply_adagrad(var, var, accum, {}), Code::invalid_argument,
                      "apply_adagrad: var float32[4] and grad float32[5]");
}

TEST_F(DenseOptimizerErrors, AdamStepMustBePositive) {
  Tensor var(DType::float32, {1});
  AdamOptions o;
  o.step = 0;
  EXPECT_TROUPE_ERROR(ops.apply_adam(var, var, var, var, o), Code::invalid_argument,
                      "adam: step 0 must be >= 1");
}

TEST_F(DenseOptimizerErrors, IntegerVariablesHaveNoOptimizerKernels) {
  Tensor var(DType::int32, {2});
  EXPECT_TROUPE_ERROR(ops.apply_sgd(var, var, {}), Code::not_found,
                      "no kernel registered for op 'apply_sgd' on device cpu for dtype int32");
}

}  // namespace
}  // namespace troupe
