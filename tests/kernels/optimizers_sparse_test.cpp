// Sparse-row optimizer updates: duplicates apply in order; untouched rows stay put.

#include "kernel_test_util.hpp"
#include "optimizer_reference.hpp"

namespace troupe {
namespace {

using testing::as_doubles;
using testing::expect_all_near;
using testing::KernelTest;

constexpr int64_t kRows = 6, kCols = 3;

class SparseOptimizers : public KernelTest, public ::testing::WithParamInterface<DType> {
 protected:
  double tol() const { return GetParam() == DType::float32 ? 2e-5 : 1e-13; }
  Tensor table(uint64_t seed) const {
    return Tensor::random_uniform({kRows, kCols}, seed, -1, 1, GetParam());
  }
  // Indices with a duplicate (4 twice) and rows 1 and 5 untouched.
  Tensor indices() const { return Tensor::from_vector<int64_t>({4}, {4, 0, 4, 2}); }
  std::vector<int64_t> index_list() const { return {4, 0, 4, 2}; }
  Tensor grad(int step) const {
    return Tensor::random_uniform({4, kCols}, 50 + step, -1, 1, GetParam());
  }
  // Applies `update(row element, grad element)` in index order, like the kernel must.
  template <class F>
  void for_rows(const Tensor& g, F update) const {
    auto vg = as_doubles(g);
    auto idx = index_list();
    for (size_t i = 0; i < idx.size(); ++i)
      for (int64_t c = 0; c < kCols; ++c) update(idx[i] * kCols + c, vg[i * kCols + c]);
  }
};

TEST_P(SparseOptimizers, SgdWithDuplicateIndices) {
  Tensor var = table(1);
  auto ref = as_doubles(var);
  for (int s = 0; s < 3; ++s) {
    Tensor g = grad(s);
    ops.sparse_apply_sgd(var, indices(), g, {0.1});
    for_rows(g, [&](int64_t at, double gv) { testing::ref_sgd(ref[at], gv, 0.1); });
  }
  expect_all_near(ref, var, tol());
}

TEST_P(SparseOptimizers, MomentumAppliesDuplicatesSequentially) {
  for (bool nesterov : {false, true}) {
    Tensor var = table(2), accum = Tensor::zeros(GetParam(), {kRows, kCols});
    auto ref = as_doubles(var);
    std::vector<double> ra(kRows * kCols, 0.0);
    for (int s = 0; s < 3; ++s) {
      Tensor g = grad(s);
      ops.sparse_apply_momentum(var, accum, indices(), g, {0.05, 0.9, nesterov});
      for_rows(g, [&](int64_t at, double gv) {
        testing::ref_momentum(ref[at], ra[at], gv, 0.05, 0.9, nesterov);
      });
    }
    expect_all_near(ref, var, tol());
    expect_all_near(ra, accum, tol());
  }
}

TEST_P(SparseOptimizers, AdamUpdatesOnlyIndexedRows) {
  Tensor var = table(3), m = Tensor::zeros(GetParam(), {kRows, kCols}),
         v = Tensor::zeros(GetParam(), {kRows, kCols});
  Tensor before = var.clone();
  auto ref = as_doubles(var);
  std::vector<double> rm(kRows * kCols, 0.0), rv(kRows * kCols, 0.0);
  for (int s = 1; s <= 3; ++s) {
    Tensor g = grad(s);
    AdamOptions o;
    o.learning_rate = 0.01, o.step = s;
    ops.sparse_apply_adam(var, m, v, indices(), g, o);
    for_rows(g, [&](int64_t at, double gv) {
      testing::ref_adam(ref[at], rm[at], rv[at], gv, 0.01, 0.9, 0.999, 1e-7, s);
    });
  }
  expect_all_near(ref, var, tol());
  expect_all_near(rm, m, tol());
  expect_all_near(rv, v, tol());
  // Rows 1 and 5 were never indexed: bit-identical to the start.
  for (int64_t row : {1, 5})
    EXPECT_TRUE(var.slice_rows(row, row + 1)
                    .clone()
                    .bitwise_equal(before.slice_rows(row, row + 1).clone()));
}

TEST_P(SparseOptimizers, AdagradWithDuplicateIndices) {
  Tensor var = table(4);
  Tensor accum(GetParam(), {kRows, kCols});
  ops.fill(accum, 0.1);
  auto ref = as_doubles(var);
  auto ra = as_doubles(accum);
  for (int s = 0; s < 3; ++s) {
    Tensor g = grad(s);
    ops.sparse_apply_adagrad(var, accum, indices(), g, {0.1, 1e-7});
    for_rows(g,
             [&](int64_t at, double gv) { testing::ref_adagrad(ref[at], ra[at], gv, 0.1, 1e-7); });
  }
  expect_all_near(ref, var, tol());
  expect_all_near(ra, accum, tol());
}

TEST_P(SparseOptimizers, AllRowsOnceEqualsDenseUpdate) {
  Tensor dense = table(5), sparse = dense.clone();
  Tensor da = Tensor::zeros(GetParam(), {kRows, kCols}), sa = da.clone();
  Tensor g = Tensor::random_uniform({kRows, kCols}, 77, -1, 1, GetParam());
  Tensor all = Tensor::from_vector<int32_t>({kRows}, {0, 1, 2, 3, 4, 5});
  ops.apply_momentum(dense, da, g, {0.1, 0.5, true});
  ops.sparse_apply_momentum(sparse, sa, all, g, {0.1, 0.5, true});
  EXPECT_TRUE(dense.bitwise_equal(sparse));
  EXPECT_TRUE(da.bitwise_equal(sa));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, SparseOptimizers,
                         ::testing::Values(DType::float32, DType::float64),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

class SparseOptimizerErrors : public KernelTest {};

TEST_F(SparseOptimizerErrors, OutOfRangeIndexIsNamed) {
  Tensor var(DType::float32, {3, 2}), accum(DType::float32, {3, 2});
  Tensor idx = Tensor::from_vector<int32_t>({2}, {0, 3});
  Tensor g(DType::float32, {2, 2});
  EXPECT_TROUPE_ERROR(ops.sparse_apply_adagrad(var, accum, idx, g, {}), Code::out_of_range,
                      "sparse_apply_adagrad: index 3 at position 1 is outside [0, 3)");
}

TEST_F(SparseOptimizerErrors, GradMustHaveOneRowPerIndex) {
  Tensor var(DType::float32, {3, 2});
  Tensor idx = Tensor::from_vector<int32_t>({2}, {0, 1});
  Tensor g(DType::float32, {3, 2});
  EXPECT_TROUPE_ERROR(ops.sparse_apply_sgd(var, idx, g, {}), Code::invalid_argument,
                      "sparse_apply_sgd: grad float32[3, 2] must have shape [2, 2] for var "
                      "float32[3, 2] and indices int32[2]");
  Tensor fidx(DType::float64, {2});
  Tensor g2(DType::float32, {2, 2});
  EXPECT_TROUPE_ERROR(ops.sparse_apply_sgd(var, fidx, g2, {}), Code::invalid_argument,
                      "sparse_apply_sgd: indices float64[2] must be int32 or int64");
  Tensor m(DType::float32, {3, 3});
  EXPECT_TROUPE_ERROR(ops.sparse_apply_adam(var, m, var, idx, g2, {}), Code::invalid_argument,
                      "sparse_apply_adam: var float32[3, 2] and m float32[3, 3]");
}

}  // namespace
}  // namespace troupe

namespace troupe {
namespace {

class SparseOptimizerEdgeErrors : public testing::KernelTest {};

TEST_F(SparseOptimizerEdgeErrors, ScalarVariableAndMismatchedSlotAreNamed) {
  Tensor scalar(DType::float32, {});
  Tensor idx = Tensor::from_vector<int32_t>({1}, {0});
  Tensor g(DType::float32, {1});
  EXPECT_TROUPE_ERROR(ops.sparse_apply_sgd(scalar, idx, g, {}), Code::invalid_argument,
                      "sparse_apply_sgd: var float32[] must have rank >= 1");
  Tensor var(DType::float32, {2, 2}), accum(DType::float64, {2, 2}), g2(DType::float32, {1, 2});
  EXPECT_TROUPE_ERROR(ops.sparse_apply_momentum(var, accum, idx, g2, {}), Code::invalid_argument,
                      "sparse_apply_momentum: var float32[2, 2] and accum float64[2, 2]");
  Tensor gpu_var = testing::fake_gpu_tensor(DType::float32, {2, 2});
  EXPECT_TROUPE_ERROR(ops.sparse_apply_adagrad(gpu_var, var, idx, g2, {}), Code::invalid_argument,
                      "sparse_apply_adagrad: var is on gpu but accum is on cpu");
}

}  // namespace
}  // namespace troupe
