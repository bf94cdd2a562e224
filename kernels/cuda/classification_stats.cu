// The classification statistics on the GPU: one block strides over the rows, each thread keeps
// a partial sum and count, and a fixed tree in shared memory combines them.
#include <string>

#include "kernels/cuda/classification_stats.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_memory.hpp"

namespace troupe {
namespace {

constexpr int kStatsThreads = 256;

template <class T, class L>
__global__ void classification_stats(const T* loss, const T* logits, const L* labels, int64_t rows,
                                     int64_t classes, double* out) {
  __shared__ double sums[kStatsThreads];
  __shared__ double counts[kStatsThreads];
  double sum = 0, count = 0;
  for (int64_t r = threadIdx.x; r < rows; r += kStatsThreads) {
    sum += double(loss[r]);
    const T* row = logits + r * classes;
    int64_t best = 0;
    for (int64_t c = 1; c < classes; ++c)
      if (row[c] > row[best]) best = c;  // the first largest, as the host's count
    if (int64_t(labels[r]) == best) count += 1;
  }
  sums[threadIdx.x] = sum;
  counts[threadIdx.x] = count;
  __syncthreads();
  for (int half = kStatsThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      sums[threadIdx.x] += sums[threadIdx.x + half];
      counts[threadIdx.x] += counts[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    out[0] = sums[0];
    out[1] = counts[0];
  }
}

template <class T>
void launch(const Tensor& loss, const Tensor& logits, const Tensor& labels, double* out) {
  const int64_t rows = logits.shape()[0], classes = logits.shape()[1];
  const T* l = static_cast<const T*>(loss.raw_data());
  const T* x = static_cast<const T*>(logits.raw_data());
  if (labels.dtype() == DType::int64)
    classification_stats<<<1, kStatsThreads>>>(l, x, static_cast<const int64_t*>(labels.raw_data()),
                                               rows, classes, out);
  else
    classification_stats<<<1, kStatsThreads>>>(l, x, static_cast<const int32_t*>(labels.raw_data()),
                                               rows, classes, out);
}

}  // namespace

ClassificationStats gpu_classification_stats(const Tensor& loss, const Tensor& logits,
                                             const Tensor& labels) {
  const std::string what = "gpu_classification_stats: ";
  if (logits.shape().rank() != 2)
    throw invalid_argument(what + "logits must be [rows, classes], got " + logits.description());
  const int64_t rows = logits.shape()[0];
  if (logits.dtype() != DType::float32 && logits.dtype() != DType::float64)
    throw invalid_argument(what + "logits must be float32 or float64, got " + logits.description());
  if (loss.dtype() != logits.dtype() || loss.num_elements() != rows)
    throw invalid_argument(what + "loss " + loss.description() + " does not match logits " +
                           logits.description());
  if ((labels.dtype() != DType::int32 && labels.dtype() != DType::int64) ||
      labels.num_elements() != rows)
    throw invalid_argument(what + "labels must be " + std::to_string(rows) +
                           " int32 or int64 values, got " + labels.description());
  int device = -1;  // the GPU of the first of them that is on one
  for (const Tensor* t : {&logits, &loss, &labels})
    if (device < 0 && t->memory() == MemoryKind::gpu) device = t->buffer()->device_index();
  if (device < 0) throw invalid_argument(what + "none of loss, logits, labels is in GPU memory");
  for (const Tensor* t : {&loss, &logits, &labels})
    if (t->memory() != MemoryKind::gpu || t->buffer()->device_index() != device)
      throw invalid_argument(what + t->description() + " is not in the memory of GPU " +
                             std::to_string(device));
  Tensor result = allocate_gpu_tensor(DType::float64, Shape{2}, device);  // binds `device`
  double* out = static_cast<double*>(result.raw_data());
  if (rows == 0) {
    cuda::check(cudaMemsetAsync(out, 0, 2 * sizeof(double), nullptr), "gpu_classification_stats");
  } else {
    if (logits.dtype() == DType::float32)
      launch<float>(loss, logits, labels, out);
    else
      launch<double>(loss, logits, labels, out);
    cuda::check_launch("gpu_classification_stats");
  }
  const Tensor host = copy_to_host(result);
  return {host.data<double>()[0], int64_t(host.data<double>()[1])};
}

}  // namespace troupe
