// GPU gather/scatter and optimizer updates (dense and sparse with duplicate indices) vs CPU.

#include "gpu_test_util.hpp"

namespace troupe {
namespace {

using testing::tol_for;

class CudaRows : public testing::GpuTest {};

TEST_F(CudaRows, GatherRowsEveryDtype) {
  Tensor idx = Tensor::random_uniform({50}, 1, 0, 20, DType::int64);
  for (DType dt : {DType::float32, DType::float64, DType::int32, DType::int64}) {
    Tensor params = Tensor::random_uniform({20, 6}, 2, -5, 5, dt);
    Tensor expected = cpu->gather_rows(params, idx);
    Tensor out = allocate_gpu_tensor(dt, {50, 6});
    gpu->gather_rows(up(params), up(idx), out);
    expect_match(expected, out, 0);
  }
}

TEST_F(CudaRows, ScatterFamilyWithDuplicatesMatchesCpuExactly) {
  Tensor idx = Tensor::random_uniform({64}, 3, 0, 8, DType::int32);  // many duplicates
  for (DType dt : {DType::float32, DType::float64, DType::int32, DType::int64}) {
    Tensor target = Tensor::random_uniform({8, 5}, 4, -100, 100, dt);
    Tensor updates = Tensor::random_uniform({64, 5}, 5, -100, 100, dt);
    Tensor gtarget = up(target), gidx = up(idx), gupdates = up(updates);
    cpu->scatter_add_rows(idx, updates, target);
    gpu->scatter_add_rows(gidx, gupdates, gtarget);
    cpu->scatter_sub_rows(idx, updates, target);  // back to (roughly) the start
    gpu->scatter_sub_rows(gidx, gupdates, gtarget);
    cpu->scatter_add_rows(idx, updates, target);
    gpu->scatter_add_rows(gidx, gupdates, gtarget);
    expect_match(target, gtarget, 0);  // same order of additions on both sides
    cpu->scatter_update_rows(idx, updates, target);
    gpu->scatter_update_rows(gidx, gupdates, gtarget);
    expect_match(target, gtarget, 0);  // last duplicate wins on both
  }
}

class CudaOptimizers : public testing::GpuTest, public ::testing::WithParamInterface<DType> {
 protected:
  Tensor rand(Shape s, uint64_t seed, double lo = -1) {
    return Tensor::random_uniform(std::move(s), seed, lo, 1, GetParam());
  }
};

TEST_P(CudaOptimizers, DenseUpdatesSeveralSteps) {
  const DType dt = GetParam();
  Tensor var = rand({1000}, 1), s1 = rand({1000}, 2, 0), s2 = rand({1000}, 3, 0);
  Tensor gvar = up(var), gs1 = up(s1), gs2 = up(s2);
  for (int step = 1; step <= 3; ++step) {
    Tensor g = rand({1000}, 10 + step), gg = up(g);
    cpu->apply_sgd(var, g, {0.1});
    gpu->apply_sgd(gvar, gg, {0.1});
    cpu->apply_momentum(var, s1, g, {0.1, 0.9, step == 2});
    gpu->apply_momentum(gvar, gs1, gg, {0.1, 0.9, step == 2});
    AdamOptions adam;
    adam.step = step;
    cpu->apply_adam(var, s1, s2, g, adam);
    gpu->apply_adam(gvar, gs1, gs2, gg, adam);
    cpu->apply_adagrad(var, s2, g, {0.1, 1e-7});
    gpu->apply_adagrad(gvar, gs2, gg, {0.1, 1e-7});
  }
  expect_match(var, gvar, tol_for(dt) * 10);
  expect_match(s1, gs1, tol_for(dt) * 10);
  expect_match(s2, gs2, tol_for(dt) * 10);
}

TEST_P(CudaOptimizers, SparseUpdatesApplyDuplicatesInOrder) {
  Tensor idx = Tensor::from_vector<int64_t>({6}, {3, 0, 3, 7, 3, 0});
  Tensor var = rand({8, 33}, 1), s1 = rand({8, 33}, 2, 0), s2 = rand({8, 33}, 3, 0);
  Tensor gvar = up(var), gs1 = up(s1), gs2 = up(s2), gidx = up(idx);
  for (int step = 1; step <= 3; ++step) {
    Tensor g = rand({6, 33}, 20 + step), gg = up(g);
    cpu->sparse_apply_sgd(var, idx, g, {0.1});
    gpu->sparse_apply_sgd(gvar, gidx, gg, {0.1});
    cpu->sparse_apply_momentum(var, s1, idx, g, {0.1, 0.9, step == 2});
    gpu->sparse_apply_momentum(gvar, gs1, gidx, gg, {0.1, 0.9, step == 2});
    AdamOptions adam;
    adam.step = step;
    cpu->sparse_apply_adam(var, s1, s2, idx, g, adam);
    gpu->sparse_apply_adam(gvar, gs1, gs2, gidx, gg, adam);
    cpu->sparse_apply_adagrad(var, s2, idx, g, {0.1, 1e-7});
    gpu->sparse_apply_adagrad(gvar, gs2, gidx, gg, {0.1, 1e-7});
  }
  expect_match(var, gvar, tol_for(GetParam()) * 10);
  expect_match(s1, gs1, tol_for(GetParam()) * 10);
  expect_match(s2, gs2, tol_for(GetParam()) * 10);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaOptimizers, ::testing::Values(DType::float32, DType::float64),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace troupe
