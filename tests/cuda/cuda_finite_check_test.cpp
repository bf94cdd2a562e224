// The non-finite guard's scan on the GPU (kernels/cuda/finite_check.hpp) and train's all_finite
// over GPU and host tensors together: NaN and both infinities anywhere are found, integer and
// empty tensors are finite. Skips without a GPU.
#include <gtest/gtest.h>

#include <limits>

#include "kernels/cuda/device_memory.hpp"
#include "kernels/cuda/finite_check.hpp"
#include "train/non_finite.hpp"

namespace troupe {
namespace {

class GpuFiniteCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    if (gpu_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
  // A float32 tensor of 100,000 ones (more elements than one grid pass covers) with `value` at
  // `at`, on GPU 0.
  static Tensor ones_with(float value, int64_t at) {
    std::vector<float> v(100000, 1.0f);
    v[size_t(at)] = value;
    return copy_to_gpu(Tensor::from_vector<float>({100000}, v), 0);
  }
};

TEST_F(GpuFiniteCheck, FindsNanAndBothInfinitiesAnywhere) {
  constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
  constexpr float kInf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(gpu_tensors_finite({ones_with(2.0f, 0)}));
  for (int64_t at : {int64_t(0), int64_t(51234), int64_t(99999)}) {
    EXPECT_FALSE(gpu_tensors_finite({ones_with(kNan, at)})) << "NaN at " << at;
    EXPECT_FALSE(gpu_tensors_finite({ones_with(kInf, at)})) << "+inf at " << at;
    EXPECT_FALSE(gpu_tensors_finite({ones_with(-kInf, at)})) << "-inf at " << at;
  }
  EXPECT_FALSE(gpu_tensors_finite({ones_with(1.0f, 3), ones_with(kNan, 7)}))
      << "the second of two tensors";
}

TEST_F(GpuFiniteCheck, Float64IntegersAndEmptyTensors) {
  Tensor f64 = copy_to_gpu(
      Tensor::from_vector<double>({3}, {1.0, -std::numeric_limits<double>::infinity(), 2.0}), 0);
  EXPECT_FALSE(gpu_tensors_finite({f64}));
  Tensor ints = copy_to_gpu(Tensor::from_vector<int32_t>({2}, {1, 2}), 0);
  EXPECT_TRUE(gpu_tensors_finite({ints}));
  EXPECT_TRUE(gpu_tensors_finite({allocate_gpu_tensor(DType::float32, Shape{0}, 0)}));
  EXPECT_TRUE(gpu_tensors_finite({}));
  EXPECT_THROW(gpu_tensors_finite({Tensor::from_vector<float>({1}, {1.0f})}), Error)
      << "a host tensor is refused";
}

TEST_F(GpuFiniteCheck, TrainsAllFiniteScansGpuAndHostTensorsTogether) {
  const Tensor host_ok = Tensor::from_vector<float>({2}, {1.0f, 2.0f});
  const Tensor host_nan =
      Tensor::from_vector<float>({2}, {1.0f, std::numeric_limits<float>::quiet_NaN()});
  EXPECT_TRUE(all_finite(std::vector<Tensor>{host_ok, ones_with(3.0f, 5)}));
  EXPECT_FALSE(all_finite(
      std::vector<Tensor>{host_ok, ones_with(-std::numeric_limits<float>::infinity(), 5)}));
  EXPECT_FALSE(all_finite(std::vector<Tensor>{host_nan, ones_with(3.0f, 5)}));
  EXPECT_FALSE(all_finite(ones_with(std::numeric_limits<float>::quiet_NaN(), 99999)));
}

}  // namespace
}  // namespace troupe
