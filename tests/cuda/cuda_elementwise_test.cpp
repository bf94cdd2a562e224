// GPU element-wise kernels and reductions vs their CPU twins on random inputs.

#include "gpu_test_util.hpp"

namespace troupe {
namespace {

using testing::tol_for;

class CudaElementwise : public testing::GpuTest {};

const DType kAll[] = {DType::float32, DType::float64, DType::int32, DType::int64};
const DType kFloat[] = {DType::float32, DType::float64};

TEST_F(CudaElementwise, AddSubEveryDtypeAndInPlace) {
  for (DType dt : kAll) {
    Tensor a = Tensor::random_uniform({1000, 3}, 1, -100, 100, dt);
    Tensor b = Tensor::random_uniform({1000, 3}, 2, -100, 100, dt);
    Tensor c(dt, {1000, 3});
    cpu->add(a, b, c);
    Tensor ga = up(a), gb = up(b), gc = up(c);
    gpu->add(ga, gb, gc);
    expect_match(c, gc, 0);
    gpu->add(ga, gb, ga);  // in place
    expect_match(c, ga, 0);
    cpu->sub(a, b, c);
    gpu->sub(up(a), gb, gc);
    expect_match(c, gc, 0);
  }
}

TEST_F(CudaElementwise, ScaleAxpyReluReluGrad) {
  for (DType dt : kFloat) {
    Tensor a = Tensor::random_uniform({4097}, 3, -1, 1, dt);
    Tensor b = Tensor::random_uniform({4097}, 4, -1, 1, dt);
    Tensor out(dt, {4097});
    Tensor ga = up(a), gb = up(b), gout = up(out);

    cpu->scale(a, -1.5, out);
    gpu->scale(ga, -1.5, gout);
    expect_match(out, gout, tol_for(dt));

    Tensor y = b.clone(), gy = up(b);
    cpu->axpy(0.25, a, y);
    gpu->axpy(0.25, ga, gy);
    expect_match(y, gy, tol_for(dt));

    cpu->relu(a, out);
    gpu->relu(ga, gout);
    expect_match(out, gout, 0);

    cpu->relu_grad(b, a, out);
    gpu->relu_grad(gb, ga, gout);
    expect_match(out, gout, 0);
  }
}

TEST_F(CudaElementwise, FillAndCopyEveryDtype) {
  for (DType dt : kAll) {
    Tensor host(dt, {333});
    Tensor g = allocate_gpu_tensor(dt, {333});
    cpu->fill(host, 42.0);
    gpu->fill(g, 42.0);
    expect_match(host, g, 0);
    Tensor src = Tensor::random_uniform({333}, 5, -9, 9, dt);
    Tensor gdst = allocate_gpu_tensor(dt, {333});
    gpu->copy(up(src), gdst);
    expect_match(src, gdst, 0);
  }
}

TEST_F(CudaElementwise, SumNManyInputCountsIncludingMultiplePasses) {
  for (DType dt : kAll) {
    for (int n : {1, 2, 5, 70}) {
      std::vector<Tensor> host, dev;
      for (int j = 0; j < n; ++j) {
        host.push_back(Tensor::random_uniform({2049}, 10 + j, -10, 10, dt));
        dev.push_back(up(host.back()));
      }
      Tensor out(dt, {2049});
      cpu->sum_n(host, out);
      Tensor gout = dev[0];  // out aliases input 0, as collectives do
      gpu->sum_n(dev, gout);
      SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " n=" << n);
      expect_match(out, gout, dt == DType::float32 ? 1e-6 : 1e-14);
    }
  }
}

TEST_F(CudaElementwise, ReduceSumAndBiasAddGrad) {
  for (DType dt : kFloat) {
    Tensor a = Tensor::random_uniform({517, 9}, 6, -1, 1, dt);
    Tensor total(dt, {}), gtotal = allocate_gpu_tensor(dt, {});
    cpu->reduce_sum(a, total);
    gpu->reduce_sum(up(a), gtotal);
    expect_match(total, gtotal, 1e-6);
    Tensor cols(dt, {9}), gcols = allocate_gpu_tensor(dt, {9});
    cpu->bias_add_grad(a, cols);
    gpu->bias_add_grad(up(a), gcols);
    expect_match(cols, gcols, dt == DType::float32 ? 1e-4 : 1e-12);
  }
}

}  // namespace
}  // namespace troupe
