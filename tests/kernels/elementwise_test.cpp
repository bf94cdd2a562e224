// Element-wise ops against closed-form values, in place and out of place, for every dtype.

#include <cmath>
#include <limits>

#include "kernel_test_util.hpp"

namespace troupe {
namespace {

using testing::as_doubles;
using testing::KernelTest;

class Elementwise : public KernelTest {};

TEST_F(Elementwise, AddFloatMatchesDoubleSum) {
  // 1037 elements: not a multiple of any vector width, so the scalar tail runs too.
  Tensor a = Tensor::random_uniform({1037}, 1, -1, 1);
  Tensor b = Tensor::random_uniform({1037}, 2, -1, 1);
  Tensor out(DType::float32, {1037});
  ops.add(a, b, out);
  auto va = as_doubles(a), vb = as_doubles(b), vo = as_doubles(out);
  for (size_t i = 0; i < vo.size(); ++i) EXPECT_EQ(vo[i], double(float(va[i]) + float(vb[i])));
}

TEST_F(Elementwise, AddIntegersIsExact) {
  Tensor a = Tensor::from_vector<int64_t>({3}, {1, -5, int64_t(1) << 40});
  Tensor b = Tensor::from_vector<int64_t>({3}, {2, 5, 1});
  Tensor out(DType::int64, {3});
  ops.add(a, b, out);
  EXPECT_EQ(out.to_vector<int64_t>(), (std::vector<int64_t>{3, 0, (int64_t(1) << 40) + 1}));
  Tensor c = Tensor::from_vector<int32_t>({2}, {7, -9});
  ops.add(c, c, c);  // fully aliased
  EXPECT_EQ(c.to_vector<int32_t>(), (std::vector<int32_t>{14, -18}));
}

TEST_F(Elementwise, AddInPlaceIntoEitherOperand) {
  Tensor a = Tensor::from_vector<double>({3}, {1, 2, 3});
  Tensor b = Tensor::from_vector<double>({3}, {10, 20, 30});
  ops.add(a, b, a);
  EXPECT_EQ(a.to_vector<double>(), (std::vector<double>{11, 22, 33}));
  ops.add(a, b, b);
  EXPECT_EQ(b.to_vector<double>(), (std::vector<double>{21, 42, 63}));
}

TEST_F(Elementwise, ScaleAndAxpy) {
  Tensor x = Tensor::from_vector<float>({4}, {1, -2, 3.5f, 0});
  Tensor out(DType::float32, {4});
  ops.scale(x, -2.0, out);
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{-2, 4, -7, 0}));
  Tensor y = Tensor::from_vector<float>({4}, {1, 1, 1, 1});
  ops.axpy(0.5, x, y);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1.5f, 0, 2.75f, 1}));
  ops.axpy(1.0, y, y);  // y += y
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{3, 0, 5.5f, 2}));
  ops.scale(y, 0.5, y);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1.5f, 0, 2.75f, 1}));
}

TEST_F(Elementwise, FillEveryDtype) {
  for (DType dt : {DType::float32, DType::float64, DType::int32, DType::int64}) {
    Tensor t(dt, {2, 3});
    ops.fill(t, 7.0);
    EXPECT_EQ(as_doubles(t), std::vector<double>(6, 7.0)) << dtype_name(dt);
  }
  Tensor empty(DType::float32, {0, 4});
  ops.fill(empty, 1.0);  // no elements, no crash
}

TEST_F(Elementwise, CopyEveryDtype) {
  for (DType dt : {DType::float32, DType::float64, DType::int32, DType::int64}) {
    Tensor src = Tensor::random_uniform({5, 3}, 9, -100, 100, dt);
    Tensor dst = Tensor::zeros(dt, {5, 3});
    ops.copy(src, dst);
    EXPECT_TRUE(dst.bitwise_equal(src)) << dtype_name(dt);
    EXPECT_FALSE(dst.shares_buffer_with(src));
  }
}

TEST_F(Elementwise, ReluAndReluGrad) {
  Tensor f = Tensor::from_vector<double>({5}, {-1.5, 0, 2, -0.0, 3});
  Tensor out(DType::float64, {5});
  ops.relu(f, out);
  EXPECT_EQ(out.to_vector<double>(), (std::vector<double>{0, 0, 2, 0, 3}));
  Tensor g = Tensor::from_vector<double>({5}, {10, 20, 30, 40, 50});
  ops.relu_grad(g, f, out);
  // TF ReluGrad passes the gradient only where the feature is strictly positive.
  EXPECT_EQ(out.to_vector<double>(), (std::vector<double>{0, 0, 30, 0, 50}));
  ops.relu(f, f);
  EXPECT_EQ(f.to_vector<double>(), (std::vector<double>{0, 0, 2, 0, 3}));
}

TEST_F(Elementwise, ShapeMismatchNamesOpAndBothShapes) {
  Tensor a(DType::float32, {2, 3}), b(DType::float32, {3, 2}), out(DType::float32, {2, 3});
  EXPECT_TROUPE_ERROR(
      ops.add(a, b, out), Code::invalid_argument,
      "add: a float32[2, 3] and b float32[3, 2] must have the same dtype and shape");
  Tensor d(DType::float64, {2, 3});
  EXPECT_TROUPE_ERROR(ops.copy(a, d), Code::invalid_argument,
                      "copy: src float32[2, 3] and dst float64[2, 3] must have the same dtype");
  EXPECT_TROUPE_ERROR(ops.relu_grad(a, b, out), Code::invalid_argument,
                      "relu_grad: gradients float32[2, 3] and features float32[3, 2]");
  EXPECT_TROUPE_ERROR(ops.axpy(1.0, a, b), Code::invalid_argument,
                      "axpy: x float32[2, 3] and y float32[3, 2]");
}

TEST_F(Elementwise, UndefinedTensorIsNamed) {
  Tensor a(DType::float32, {2}), undefined;
  EXPECT_TROUPE_ERROR(ops.scale(a, 2.0, undefined), Code::invalid_argument,
                      "scale: out is an undefined tensor");
}

TEST_F(Elementwise, MixedDevicesAreNamed) {
  Tensor host(DType::float32, {4});
  Tensor gpu = testing::fake_gpu_tensor(DType::float32, {4});
  EXPECT_TROUPE_ERROR(ops.add(host, gpu, host), Code::invalid_argument,
                      "add: a is on cpu but b is on gpu");
}

TEST_F(Elementwise, UnsupportedDtypeNamesTheMissingKernel) {
  Tensor a(DType::int32, {2}), out(DType::int32, {2});
  EXPECT_TROUPE_ERROR(ops.scale(a, 2.0, out), Code::not_found,
                      "no kernel registered for op 'scale' on device cpu for dtype int32");
  EXPECT_TROUPE_ERROR(ops.relu(a, out), Code::not_found, "op 'relu' on device cpu for dtype int32");
}

}  // namespace
}  // namespace troupe

#include "kernels/host_accumulate.hpp"

namespace troupe {
namespace {

class Subtract : public testing::KernelTest {};

TEST_F(Subtract, SubEveryDtypeAndInPlace) {
  for (DType dt : {DType::float32, DType::float64, DType::int32, DType::int64}) {
    Tensor a = Tensor::random_uniform({101}, 1, -50, 50, dt);
    Tensor b = Tensor::random_uniform({101}, 2, -50, 50, dt);
    Tensor out(dt, {101});
    ops.sub(a, b, out);
    auto va = testing::as_doubles(a), vb = testing::as_doubles(b), vo = testing::as_doubles(out);
    for (size_t i = 0; i < vo.size(); ++i)
      EXPECT_NEAR(vo[i], va[i] - vb[i], 1e-5 * (1 + std::abs(va[i]))) << dtype_name(dt);
    ops.sub(a, a, a);
    EXPECT_EQ(testing::as_doubles(a), std::vector<double>(101, 0.0));
  }
  Tensor x(DType::float32, {2}), y(DType::float32, {3});
  EXPECT_TROUPE_ERROR(ops.sub(x, y, x), Code::invalid_argument,
                      "sub: a float32[2] and b float32[3] must have the same dtype and shape");
}

TEST(HostAccumulate, AddsSourceIntoDestinationForEveryDtype) {
  std::vector<double> d = {1, 2, 3}, s = {0.5, 0.25, -3};
  host_accumulate(d.data(), s.data(), DType::float64, 3);
  EXPECT_EQ(d, (std::vector<double>{1.5, 2.25, 0}));
  std::vector<int32_t> di = {1, 2}, si = {-1, 40};
  host_accumulate(di.data(), si.data(), DType::int32, 2);
  EXPECT_EQ(di, (std::vector<int32_t>{0, 42}));
  std::vector<float> df = {1}, sf = {2};
  host_accumulate(df.data(), sf.data(), DType::float32, 0);  // count 0 touches nothing
  EXPECT_EQ(df[0], 1.0f);
}

TEST(HostAddInto, WritesTheSumAndToleratesDestinationEqualToEitherOperand) {
  std::vector<float> a = {1, 2, 3}, b = {10, 20, 30}, dst(3, -1);
  host_add_into(dst.data(), a.data(), b.data(), DType::float32, 3);
  EXPECT_EQ(dst, (std::vector<float>{11, 22, 33}));
  host_add_into(b.data(), a.data(), b.data(), DType::float32, 3);  // dst == b
  EXPECT_EQ(b, (std::vector<float>{11, 22, 33}));
  host_add_into(a.data(), a.data(), dst.data(), DType::float32, 3);  // dst == a
  EXPECT_EQ(a, (std::vector<float>{12, 24, 36}));
  std::vector<int64_t> x = {5}, y = {-7}, z = {0};
  host_add_into(z.data(), x.data(), y.data(), DType::int64, 1);
  EXPECT_EQ(z[0], -2);
}

TEST(HostAccumulate, AddIntoFiniteSumsAndSaysWhetherEverySumIsFinite) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> a(37), b(37), dst(37), plain(37);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = float(i) * 0.5f;
    b[i] = 3.0f - float(i);
  }
  EXPECT_TRUE(host_add_into_finite(dst.data(), a.data(), b.data(), DType::float32, 37));
  host_add_into(plain.data(), a.data(), b.data(), DType::float32, 37);
  EXPECT_EQ(dst, plain);
  for (size_t at : {size_t(0), size_t(17), size_t(36)}) {  // vector body and scalar tail
    auto bad = b;
    bad[at] = inf;
    EXPECT_FALSE(host_add_into_finite(dst.data(), a.data(), bad.data(), DType::float32, 37));
    bad[at] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_FALSE(host_add_into_finite(dst.data(), a.data(), bad.data(), DType::float32, 37));
  }
  std::vector<float> big(37, std::numeric_limits<float>::max());
  EXPECT_FALSE(host_add_into_finite(dst.data(), big.data(), big.data(), DType::float32, 37));
  EXPECT_TRUE(std::isinf(dst[0]));
  // dst aliasing an operand accumulates, as host_add_into does.
  auto acc = a;
  EXPECT_TRUE(host_add_into_finite(acc.data(), acc.data(), b.data(), DType::float32, 37));
  EXPECT_EQ(acc, plain);
  std::vector<double> da{1, 2}, db{-inf, 0}, dd(2);
  EXPECT_FALSE(host_add_into_finite(dd.data(), da.data(), db.data(), DType::float64, 2));
  std::vector<int32_t> ia{1, 2}, ib{3, 4}, id(2);
  EXPECT_TRUE(host_add_into_finite(id.data(), ia.data(), ib.data(), DType::int32, 2));
  EXPECT_EQ(id, (std::vector<int32_t>{4, 6}));
}

}  // namespace
}  // namespace troupe
