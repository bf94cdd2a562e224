// The GEMM count `troupe bench train` divides by: what train/dense_models executes per example.
#include <gtest/gtest.h>

#include <vector>

#include "core/status.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/registry.hpp"
#include "train/gemm_flops.hpp"
#include "train/model.hpp"

using namespace troupe;

namespace {

// The matmuls compute() runs, recorded by a float32/float64 kernel that forwards to OpenBLAS.
struct Recorded {
  int64_t m, n, k;
  bool transpose_a, transpose_b;
};
std::vector<Recorded> recorded;
KernelFn<MatmulArgs> real_matmul_f32 = nullptr;
KernelFn<MatmulArgs> real_matmul_f64 = nullptr;

void counting_matmul_f32(const MatmulArgs& x) {
  recorded.push_back({x.m, x.n, x.k, x.transpose_a, x.transpose_b});
  real_matmul_f32(x);
}
void counting_matmul_f64(const MatmulArgs& x) {
  recorded.push_back({x.m, x.n, x.k, x.transpose_a, x.transpose_b});
  real_matmul_f64(x);
}

// The CPU registry with matmul replaced by the counting kernel.
KernelRegistry counting_registry() {
  KernelRegistry real = make_cpu_registry();
  real_matmul_f32 = real.find<MatmulArgs>("matmul", KernelDevice::cpu, DType::float32);
  real_matmul_f64 = real.find<MatmulArgs>("matmul", KernelDevice::cpu, DType::float64);
  KernelRegistry r;
  cpu::register_elementwise(r);
  cpu::register_reductions(r);
  cpu::register_nn(r);
  cpu::register_rows(r);
  cpu::register_dense_optimizers(r);
  cpu::register_sparse_optimizers(r);
  r.add<MatmulArgs>("matmul", KernelDevice::cpu, DType::float32, counting_matmul_f32);
  r.add<MatmulArgs>("matmul", KernelDevice::cpu, DType::float64, counting_matmul_f64);
  return r;
}

// GEMM FLOPs per example of one training step of `model` at batch `batch`, as executed.
double executed_flops_per_example(const Model& model, int64_t input_dim, int64_t classes,
                                  int64_t batch) {
  KernelRegistry registry = counting_registry();
  Ops ops(registry);
  std::vector<Tensor> params;
  for (auto& p : model.initial_parameters()) params.push_back(p.value);
  Tensor x = Tensor::random_normal({batch, input_dim}, 1, 0, 1, params.at(0).dtype());
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < batch; ++i) labels.push_back(i % classes);
  Tensor y = Tensor::from_vector<int64_t>({batch}, labels);
  recorded.clear();
  model.compute(ops, params, x, y, batch);
  double flops = 0;
  for (const auto& g : recorded) flops += 2.0 * double(g.m) * double(g.n) * double(g.k);
  return flops / double(batch);
}

}  // namespace

TEST(GemmFlops, Mlp784x256x10CountsNoInputGradientForTheFirstLayer) {
  // Forward 784*256 + 256*10, weight gradients the same, input gradient of layer 1 only
  // (256*10); 2 FLOPs per multiply-add.
  const double expected = 2.0 * (2 * (784.0 * 256 + 256.0 * 10) + 256.0 * 10);
  EXPECT_DOUBLE_EQ(mlp_gemm_flops_per_example({784, 256, 10}), expected);
  EXPECT_DOUBLE_EQ(expected, 818176.0);
}

TEST(GemmFlops, ShapesFollowExecutionOrder) {
  auto gemms = mlp_step_gemms({4, 3, 2}, 5);
  ASSERT_EQ(gemms.size(), 5u);
  // forward layer 0, forward layer 1, dW layer 1, dX layer 1, dW layer 0
  EXPECT_EQ(gemms[0].rows * gemms[0].inner * gemms[0].cols, 5 * 4 * 3);
  EXPECT_EQ(gemms[1].rows * gemms[1].inner * gemms[1].cols, 5 * 3 * 2);
  EXPECT_EQ(gemms[2].rows, 3);  // dW1 = h^T [3, 5] * dz [5, 2]
  EXPECT_EQ(gemms[3].cols, 3);  // dX1 = dz [5, 2] * W1^T [2, 3]
  EXPECT_EQ(gemms[4].rows, 4);  // dW0 = x^T [4, 5] * dh [5, 3]
}

TEST(GemmFlops, OneLayerHasNoInputGradient) {
  EXPECT_DOUBLE_EQ(mlp_gemm_flops_per_example({10, 1}), 2.0 * 2 * 10);
}

TEST(GemmFlops, FewerThanTwoWidthsAreRefusedByName) {
  try {
    mlp_gemm_flops_per_example({784});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("got 1 width(s)"), std::string::npos) << e.what();
  }
}

TEST(GemmFlops, MatchesTheMatmulsTheMlpExecutes) {
  ModelConfig c;
  c.input_dim = 784;
  c.hidden = {256};
  c.classes = 10;
  auto mlp = make_mlp(c);
  EXPECT_EQ(executed_flops_per_example(*mlp, 784, 10, 8),
            mlp_gemm_flops_per_example({784, 256, 10}));
  // Same shapes and transposes, in the same order: the bench times exactly these products.
  const auto counted = mlp_step_gemms({784, 256, 10}, 8);
  ASSERT_EQ(recorded.size(), counted.size());
  for (size_t i = 0; i < counted.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(recorded[i].m, counted[i].rows);
    EXPECT_EQ(recorded[i].k, counted[i].inner);
    EXPECT_EQ(recorded[i].n, counted[i].cols);
    EXPECT_EQ(recorded[i].transpose_a, counted[i].transpose_a);
    EXPECT_EQ(recorded[i].transpose_b, counted[i].transpose_b);
  }

  c.input_dim = 4;
  c.hidden = {5, 3};
  c.classes = 3;
  c.dtype = DType::float64;
  auto deep = make_mlp(c);
  EXPECT_EQ(executed_flops_per_example(*deep, 4, 3, 6), mlp_gemm_flops_per_example({4, 5, 3, 3}));
  EXPECT_EQ(recorded.size(), mlp_step_gemms({4, 5, 3, 3}, 6).size());
}
