// matmul against a naive double-precision loop: all transpose combinations, odd and empty sizes.

#include "kernel_test_util.hpp"

namespace troupe {
namespace {

using testing::as_doubles;
using testing::KernelTest;

// Naive reference of alpha * op(a) @ op(b) + beta * c, in double.
std::vector<double> reference(const Tensor& a, const Tensor& b, const Tensor& c, bool ta, bool tb,
                              double alpha, double beta) {
  const int64_t m = ta ? a.shape()[1] : a.shape()[0], k = ta ? a.shape()[0] : a.shape()[1];
  const int64_t n = tb ? b.shape()[0] : b.shape()[1];
  auto va = as_doubles(a), vb = as_doubles(b), vc = as_doubles(c);
  auto at = [&](int64_t i, int64_t p) { return ta ? va[p * m + i] : va[i * k + p]; };
  auto bt = [&](int64_t p, int64_t j) { return tb ? vb[j * k + p] : vb[p * n + j]; };
  std::vector<double> out(size_t(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += at(i, p) * bt(p, j);
      out[i * n + j] = alpha * s + beta * vc[i * n + j];
    }
  return out;
}

struct MatmulCase {
  int64_t m, k, n;
};

class Matmul : public KernelTest, public ::testing::WithParamInterface<MatmulCase> {};

TEST_P(Matmul, AllTransposeCombinationsMatchNaiveDoubleLoop) {
  auto [m, k, n] = GetParam();
  for (DType dt : {DType::float32, DType::float64}) {
    const double tol = dt == DType::float32 ? 1e-5 : 1e-12;
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        Tensor a = Tensor::random_uniform(ta ? Shape{k, m} : Shape{m, k}, 11, -1, 1, dt);
        Tensor b = Tensor::random_uniform(tb ? Shape{n, k} : Shape{k, n}, 12, -1, 1, dt);
        Tensor c = Tensor::random_uniform({m, n}, 13, -1, 1, dt);
        for (auto [alpha, beta] : {std::pair{1.0, 0.0}, std::pair{0.5, -2.0}}) {
          auto expected = reference(a, b, c, ta, tb, alpha, beta);
          Tensor out = c.clone();
          ops.matmul(a, b, out, ta, tb, alpha, beta);
          SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " ta=" << ta << " tb=" << tb
                                            << " alpha=" << alpha << " beta=" << beta);
          testing::expect_all_near(expected, out, tol * double(k + 1));
        }
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, Matmul,
                         ::testing::Values(MatmulCase{1, 1, 1}, MatmulCase{3, 5, 7},
                                           MatmulCase{7, 5, 3}, MatmulCase{64, 33, 17},
                                           MatmulCase{0, 4, 3}, MatmulCase{3, 0, 4},
                                           MatmulCase{3, 4, 0}),
                         [](const auto& info) {
                           return "m" + std::to_string(info.param.m) + "_k" +
                                  std::to_string(info.param.k) + "_n" +
                                  std::to_string(info.param.n);
                         });

class MatmulErrors : public KernelTest {};

TEST_F(MatmulErrors, InnerDimensionMismatchNamesBothShapes) {
  Tensor a(DType::float32, {2, 3}), b(DType::float32, {4, 5}), out(DType::float32, {2, 5});
  EXPECT_TROUPE_ERROR(ops.matmul(a, b, out), Code::invalid_argument,
                      "matmul: inner dimensions differ: a float32[2, 3] (transpose_a=false) and "
                      "b float32[4, 5] (transpose_b=false)");
}

TEST_F(MatmulErrors, WrongOutputShape) {
  Tensor a(DType::float32, {2, 3}), b(DType::float32, {3, 5}), out(DType::float32, {5, 2});
  EXPECT_TROUPE_ERROR(ops.matmul(a, b, out), Code::invalid_argument,
                      "matmul: out float32[5, 2] must have shape [2, 5] for a float32[2, 3] and b "
                      "float32[3, 5]");
}

TEST_F(MatmulErrors, RankAndDtype) {
  Tensor v(DType::float32, {3}), b(DType::float32, {3, 5}), out(DType::float32, {1, 5});
  EXPECT_TROUPE_ERROR(ops.matmul(v, b, out), Code::invalid_argument,
                      "matmul: a float32[3] must have rank 2");
  Tensor d(DType::float64, {1, 3});
  EXPECT_TROUPE_ERROR(ops.matmul(d, b, out), Code::invalid_argument,
                      "matmul: a float64[1, 3] and b float32[3, 5] must have the same dtype");
  Tensor i(DType::int32, {1, 1}), io(DType::int32, {1, 1});
  EXPECT_TROUPE_ERROR(ops.matmul(i, i, io), Code::not_found,
                      "op 'matmul' on device cpu for dtype int32");
}

}  // namespace
}  // namespace troupe
