// GPU matmul (cuBLAS), bias_add and softmax cross-entropy vs the CPU kernels.

#include "gpu_test_util.hpp"

namespace troupe {
namespace {

class CudaNN : public testing::GpuTest {};

TEST_F(CudaNN, MatmulAllTransposeCombinations) {
  struct Case {
    int64_t m, k, n;
  };
  for (Case s : {Case{1, 1, 1}, Case{3, 5, 7}, Case{65, 33, 17}, Case{4, 0, 3}}) {
    for (DType dt : {DType::float32, DType::float64})
      for (bool ta : {false, true})
        for (bool tb : {false, true}) {
          Tensor a = Tensor::random_uniform(ta ? Shape{s.k, s.m} : Shape{s.m, s.k}, 1, -1, 1, dt);
          Tensor b = Tensor::random_uniform(tb ? Shape{s.n, s.k} : Shape{s.k, s.n}, 2, -1, 1, dt);
          Tensor c = Tensor::random_uniform({s.m, s.n}, 3, -1, 1, dt);
          Tensor gc = up(c);
          cpu->matmul(a, b, c, ta, tb, 0.5, -1.0);
          gpu->matmul(up(a), up(b), gc, ta, tb, 0.5, -1.0);
          SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " " << s.m << "x" << s.k << "x"
                                            << s.n << " ta=" << ta << " tb=" << tb);
          expect_match(c, gc, testing::tol_for(dt) * double(s.k + 1));
        }
  }
}

TEST_F(CudaNN, BiasAdd) {
  for (DType dt : {DType::float32, DType::float64}) {
    Tensor v = Tensor::random_uniform({31, 4, 7}, 4, -1, 1, dt);
    Tensor bias = Tensor::random_uniform({7}, 5, -1, 1, dt);
    Tensor out(dt, v.shape()), gout = allocate_gpu_tensor(dt, v.shape());
    cpu->bias_add(v, bias, out);
    gpu->bias_add(up(v), up(bias), gout);
    expect_match(out, gout, 0);
  }
}

TEST_F(CudaNN, SoftmaxCrossEntropyBothLabelTypes) {
  const int64_t rows = 300, classes = 10;
  for (DType dt : {DType::float32, DType::float64}) {
    Tensor logits = Tensor::random_uniform({rows, classes}, 6, -20, 20, dt);
    Tensor labels64 = Tensor::random_uniform({rows}, 7, 0, double(classes), DType::int64);
    Tensor labels32 = Tensor::random_uniform({rows}, 7, 0, double(classes), DType::int32);
    auto expected = cpu->softmax_cross_entropy(logits, labels64);
    for (const Tensor& labels : {labels64, labels32}) {
      Tensor loss = allocate_gpu_tensor(dt, {rows}),
             grad = allocate_gpu_tensor(dt, {rows, classes});
      gpu->softmax_cross_entropy(up(logits), up(labels), loss, grad);
      expect_match(expected.loss, loss, testing::tol_for(dt) * 10);
      expect_match(expected.grad, grad, testing::tol_for(dt));
    }
  }
}

TEST_F(CudaNN, MatmulWithoutCublasHandleIsNamed) {
  Ops no_handle(*registry);  // no GpuStream context
  Tensor a = allocate_gpu_tensor(DType::float32, {2, 2});
  Tensor c = allocate_gpu_tensor(DType::float32, {2, 2});
  try {
    no_handle.matmul(a, a, c);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("matmul on gpu needs a cuBLAS handle"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace troupe
