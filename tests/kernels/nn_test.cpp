// bias_add and sparse softmax cross-entropy against double references and a numerical gradient.

#include <cmath>

#include "kernel_test_util.hpp"

namespace troupe {
namespace {

using testing::as_doubles;
using testing::KernelTest;

class NN : public KernelTest {};

TEST_F(NN, BiasAddBroadcastsOverLeadingDimensions) {
  Tensor v = Tensor::random_uniform({2, 3, 5}, 1, -1, 1);
  Tensor bias = Tensor::random_uniform({5}, 2, -1, 1);
  Tensor out(DType::float32, {2, 3, 5});
  ops.bias_add(v, bias, out);
  auto vv = as_doubles(v), vb = as_doubles(bias), vo = as_doubles(out);
  for (size_t i = 0; i < vo.size(); ++i) EXPECT_EQ(vo[i], double(float(vv[i]) + float(vb[i % 5])));
  ops.bias_add(v, bias, v);  // in place
  EXPECT_TRUE(v.bitwise_equal(out));
}

TEST_F(NN, BiasAddErrors) {
  Tensor v(DType::float32, {2, 3}), out(DType::float32, {2, 3});
  Tensor bias4(DType::float32, {4});
  EXPECT_TROUPE_ERROR(
      ops.bias_add(v, bias4, out), Code::invalid_argument,
      "bias_add: bias float32[4] must match the last dimension of value float32[2, 3]");
  Tensor bias2d(DType::float32, {1, 3});
  EXPECT_TROUPE_ERROR(ops.bias_add(v, bias2d, out), Code::invalid_argument,
                      "bias_add: bias float32[1, 3] must have rank 1");
  Tensor scalar(DType::float32, {});
  EXPECT_TROUPE_ERROR(ops.bias_add(scalar, bias4, scalar), Code::invalid_argument,
                      "bias_add: value float32[] must have rank >= 1");
}

// Double-precision reference: per-row loss and softmax - onehot.
void xent_reference(const std::vector<double>& z, const std::vector<int64_t>& labels,
                    int64_t classes, std::vector<double>& loss, std::vector<double>& grad) {
  const size_t rows = labels.size();
  loss.assign(rows, 0), grad.assign(rows * classes, 0);
  for (size_t r = 0; r < rows; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int64_t c = 0; c < classes; ++c) mx = std::max(mx, z[r * classes + c]);
    for (int64_t c = 0; c < classes; ++c) sum += std::exp(z[r * classes + c] - mx);
    loss[r] = mx + std::log(sum) - z[r * classes + labels[r]];
    for (int64_t c = 0; c < classes; ++c)
      grad[r * classes + c] = std::exp(z[r * classes + c] - mx) / sum - (c == labels[r] ? 1 : 0);
  }
}

TEST_F(NN, SoftmaxCrossEntropyMatchesDoubleReference) {
  const int64_t rows = 6, classes = 7;
  std::vector<int64_t> labels = {0, 6, 3, 3, 1, 5};
  for (DType dt : {DType::float32, DType::float64}) {
    // Large logits (up to 50) would overflow a naive exp in float: checks the max shift.
    Tensor logits = Tensor::random_uniform({rows, classes}, 21, -50, 50, dt);
    std::vector<double> loss, grad;
    xent_reference(as_doubles(logits), labels, classes, loss, grad);
    for (DType label_dt : {DType::int32, DType::int64}) {
      Tensor lab = label_dt == DType::int64
                       ? Tensor::from_vector<int64_t>({rows}, labels)
                       : Tensor::from_vector<int32_t>({rows}, {0, 6, 3, 3, 1, 5});
      auto result = ops.softmax_cross_entropy(logits, lab);
      const double tol = dt == DType::float32 ? 1e-5 : 1e-12;
      testing::expect_all_near(loss, result.loss, tol);
      testing::expect_all_near(grad, result.grad, tol);
    }
  }
}

TEST_F(NN, SoftmaxCrossEntropyGradientMatchesNumericalDerivative) {
  const int64_t rows = 3, classes = 4;
  Tensor logits = Tensor::random_uniform({rows, classes}, 5, -2, 2, DType::float64);
  Tensor labels = Tensor::from_vector<int32_t>({rows}, {2, 0, 3});
  auto analytic = as_doubles(ops.softmax_cross_entropy(logits, labels).grad);
  const double h = 1e-6;
  for (int64_t i = 0; i < rows * classes; ++i) {
    Tensor plus = logits.clone(), minus = logits.clone();
    plus.data<double>()[i] += h;
    minus.data<double>()[i] -= h;
    const int64_t r = i / classes;
    const double lp = ops.softmax_cross_entropy(plus, labels).loss.data<double>()[r];
    const double lm = ops.softmax_cross_entropy(minus, labels).loss.data<double>()[r];
    EXPECT_NEAR(analytic[i], (lp - lm) / (2 * h), 1e-7) << "logit " << i;
  }
}

TEST_F(NN, SoftmaxCrossEntropyUniformLogitsGiveLogClasses) {
  Tensor logits = Tensor::zeros(DType::float64, {2, 5});
  Tensor labels = Tensor::from_vector<int64_t>({2}, {4, 0});
  auto r = ops.softmax_cross_entropy(logits, labels);
  EXPECT_NEAR(r.loss.data<double>()[0], std::log(5.0), 1e-15);
  EXPECT_NEAR(r.grad.data<double>()[4], 0.2 - 1.0, 1e-15);
  EXPECT_NEAR(r.grad.data<double>()[5], 0.2 - 1.0, 1e-15);
}

TEST_F(NN, SoftmaxCrossEntropyErrors) {
  Tensor logits(DType::float32, {2, 3});
  Tensor bad_label = Tensor::from_vector<int32_t>({2}, {1, 3});
  EXPECT_TROUPE_ERROR(ops.softmax_cross_entropy(logits, bad_label), Code::out_of_range,
                      "softmax_cross_entropy: label 3 of row 1 is outside the valid range [0, 3)");
  Tensor negative = Tensor::from_vector<int64_t>({2}, {-1, 0});
  EXPECT_TROUPE_ERROR(ops.softmax_cross_entropy(logits, negative), Code::out_of_range,
                      "label -1 of row 0");
  Tensor float_labels(DType::float32, {2});
  EXPECT_TROUPE_ERROR(ops.softmax_cross_entropy(logits, float_labels), Code::invalid_argument,
                      "softmax_cross_entropy: labels float32[2] must be int32 or int64");
  Tensor three = Tensor::from_vector<int32_t>({3}, {0, 0, 0});
  EXPECT_TROUPE_ERROR(ops.softmax_cross_entropy(logits, three), Code::invalid_argument,
                      "softmax_cross_entropy: labels int32[3] must have one label per row of "
                      "logits float32[2, 3]");
  Tensor rank1(DType::float32, {3});
  EXPECT_TROUPE_ERROR(ops.softmax_cross_entropy(rank1, three), Code::invalid_argument,
                      "softmax_cross_entropy: logits float32[3] must have rank 2");
}

}  // namespace
}  // namespace troupe

namespace troupe {
namespace {

class NNEdgeErrors : public testing::KernelTest {};

TEST_F(NNEdgeErrors, RemainingArgumentChecksNameTheProblem) {
  Tensor no_classes(DType::float32, {2, 0});
  Tensor labels = Tensor::from_vector<int32_t>({2}, {0, 0});
  EXPECT_TROUPE_ERROR(ops.softmax_cross_entropy(no_classes, labels), Code::invalid_argument,
                      "softmax_cross_entropy: logits float32[2, 0] must have at least one class");
  EXPECT_TROUPE_ERROR(ops.softmax_cross_entropy(Tensor(), labels), Code::invalid_argument,
                      "softmax_cross_entropy: logits is an undefined tensor");
  Tensor scalar(DType::float32, {}), out(DType::float32, {1});
  EXPECT_TROUPE_ERROR(ops.bias_add_grad(scalar, out), Code::invalid_argument,
                      "bias_add_grad: grad float32[] must have rank >= 1");
  // No rows: nothing to compute, nothing to throw.
  auto empty = ops.softmax_cross_entropy(Tensor(DType::float64, {0, 3}),
                                         Tensor::from_vector<int64_t>({0}, {}));
  EXPECT_EQ(empty.loss.shape(), (Shape{0}));
}

}  // namespace
}  // namespace troupe
