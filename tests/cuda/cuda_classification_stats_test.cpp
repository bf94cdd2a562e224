// A classification batch's loss sum and correct count computed on the GPU
// (kernels/cuda/classification_stats.hpp) against the host's, and the softmax cross-entropy
// loss (train/losses) reporting the same statistics on both sides. Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cuda/classification_stats.hpp"
#include "tests/common/error_of.hpp"
#include "tests/cuda/gpu_test_util.hpp"
#include "train/losses.hpp"

namespace troupe {
namespace {

using testing::GpuTest;

class GpuClassificationStats : public GpuTest {
 protected:
  // The host's reading of the same batch: the loss summed in row order, the first largest
  // logit of each row against its label.
  template <class T, class L>
  static std::pair<double, int64_t> on_host(const std::vector<T>& loss,
                                            const std::vector<T>& logits,
                                            const std::vector<L>& labels, int64_t classes) {
    double sum = 0;
    int64_t correct = 0;
    for (size_t r = 0; r < labels.size(); ++r) {
      sum += double(loss[r]);
      int64_t best = 0;
      for (int64_t c = 1; c < classes; ++c)
        if (logits[r * size_t(classes) + size_t(c)] > logits[r * size_t(classes) + size_t(best)])
          best = c;
      correct += int64_t(labels[r]) == best;
    }
    return {sum, correct};
  }

  // `rows` random rows of `classes` logits; every 7th row ties its first two logits at the
  // maximum, every 11th label lies outside [0, classes).
  template <class T, class L>
  void check(int64_t rows, int64_t classes) {
    const DType t = dtype_of<T>(), l = dtype_of<L>();
    const Tensor random = Tensor::random_uniform(Shape{rows, classes + 1}, 7, -3.0, 3.0, t);
    std::vector<T> logits, loss;
    std::vector<L> labels;
    const T* v = random.data<T>();
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < classes; ++c) logits.push_back(v[r * (classes + 1) + c]);
      if (r % 7 == 0 && classes > 1)
        logits[size_t(r * classes)] = logits[size_t(r * classes + 1)] = T(9);
      loss.push_back(std::abs(v[r * (classes + 1) + classes]));
      labels.push_back(L(r % 11 == 0 ? classes + 2 : (r * 3) % classes));
    }
    const auto [want_sum, want_correct] = on_host(loss, logits, labels, classes);
    const ClassificationStats got =
        gpu_classification_stats(up(Tensor::from_vector<T>({rows}, loss)),
                                 up(Tensor::from_vector<T>({rows, classes}, logits)),
                                 up(Tensor::from_vector<L>({rows}, labels)));
    EXPECT_EQ(got.correct, want_correct) << dtype_name(t) << "/" << dtype_name(l);
    EXPECT_NEAR(got.loss_sum, want_sum, 1e-12 * std::abs(want_sum)) << dtype_name(t);
  }
};

TEST_F(GpuClassificationStats, MatchesTheHostForEveryDtypeWithTiesAndLabelsOutOfRange) {
  check<float, int64_t>(1000, 10);
  check<float, int32_t>(257, 3);
  check<double, int64_t>(1000, 10);
  check<double, int32_t>(5, 1);
}

TEST_F(GpuClassificationStats, SameResultEveryRun) {
  const Tensor loss = up(Tensor::random_uniform(Shape{4096}, 3, 0.0, 5.0, DType::float32));
  const Tensor logits = up(Tensor::random_uniform(Shape{4096, 10}, 4, -1.0, 1.0, DType::float32));
  const Tensor labels = up(Tensor::from_vector<int64_t>({4096}, std::vector<int64_t>(4096, 3)));
  const ClassificationStats first = gpu_classification_stats(loss, logits, labels);
  for (int i = 0; i < 20; ++i) {
    const ClassificationStats again = gpu_classification_stats(loss, logits, labels);
    EXPECT_EQ(again.loss_sum, first.loss_sum) << "a fixed summation order";
    EXPECT_EQ(again.correct, first.correct);
  }
}

TEST_F(GpuClassificationStats, EmptyBatchesAndMisfitsAreNamed) {
  const ClassificationStats none = gpu_classification_stats(
      up(Tensor(DType::float32, Shape{0})), up(Tensor(DType::float32, Shape{0, 10})),
      up(Tensor(DType::int64, Shape{0})));
  EXPECT_EQ(none.loss_sum, 0.0);
  EXPECT_EQ(none.correct, 0);
  const Tensor loss = up(Tensor::zeros(DType::float32, Shape{4}));
  const Tensor logits = up(Tensor::zeros(DType::float32, Shape{4, 2}));
  const Tensor labels = up(Tensor::zeros(DType::int64, Shape{4}));
  using testing::error_of;
  EXPECT_NE(error_of([&] {
              gpu_classification_stats(up(Tensor::zeros(DType::float32, Shape{3})), logits, labels);
            }).find("loss float32[3] does not match logits float32[4, 2]"),
            std::string::npos)
      << "loss of 3 rows for 4";
  EXPECT_NE(error_of([&] {
              gpu_classification_stats(loss, logits, up(Tensor::zeros(DType::float32, Shape{4})));
            }).find("labels must be 4 int32 or int64 values, got float32[4]"),
            std::string::npos)
      << "float labels";
  EXPECT_NE(error_of([&] {
              gpu_classification_stats(loss, Tensor::zeros(DType::float32, Shape{4, 2}), labels);
            }).find("float32[4, 2] is not in the memory of GPU 0"),
            std::string::npos)
      << "logits on the host";
}

TEST_F(GpuClassificationStats, SoftmaxCrossEntropyReportsTheHostsStatistics) {
  const Tensor logits = Tensor::random_uniform(Shape{300, 10}, 11, -2.0, 2.0, DType::float32);
  std::vector<int64_t> labels;
  for (int64_t r = 0; r < 300; ++r) labels.push_back(r % 10);
  const Tensor host_labels = Tensor::from_vector<int64_t>({300}, labels);
  const LossWithGrad cpu = sparse_softmax_cross_entropy(*this->cpu, logits, host_labels, 600);
  // The statistics kernel runs on the legacy default stream, as a replica's kernels do.
  GpuStream legacy(0, StreamKind::legacy_default);
  const Ops on_legacy(*registry, legacy.context());
  const LossWithGrad gpu =
      sparse_softmax_cross_entropy(on_legacy, up(logits), up(host_labels), 600);
  EXPECT_EQ(gpu.stats.rows, cpu.stats.rows);
  EXPECT_EQ(gpu.stats.correct, cpu.stats.correct);
  EXPECT_NEAR(gpu.stats.loss_sum, cpu.stats.loss_sum, 1e-5 * cpu.stats.loss_sum);
  expect_match(cpu.grad, gpu.grad, 1e-5);
}

}  // namespace
}  // namespace troupe
