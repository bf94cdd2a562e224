// CUDA optimizer updates with TF's formulas (see kernels/cpu/optimizer_math.hpp). Dense: one
// element per thread. Sparse: one thread per column walks the indices in order, so duplicated
// indices apply one after another exactly as on the CPU.

#include <cmath>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_kernel_list.hpp"
#include "kernels/kernel_args.hpp"

namespace troupe::cuda {
namespace {

enum class Rule { sgd, momentum, adam, adagrad };

// The scalars of an update, converted to T once on the host.
template <class T>
struct Coefficients {
  T lr, momentum, one_minus_beta1, one_minus_beta2, epsilon, adam_alpha;
  bool nesterov;
};

template <class T>
Coefficients<T> coefficients(const OptimizerHyper& h) {
  Coefficients<T> k;
  k.lr = T(h.lr), k.momentum = T(h.momentum), k.nesterov = h.nesterov;
  k.one_minus_beta1 = T(1) - T(h.beta1), k.one_minus_beta2 = T(1) - T(h.beta2);
  k.epsilon = T(h.epsilon);
  k.adam_alpha = T(h.lr) * std::sqrt(T(1) - T(h.beta2_power)) / (T(1) - T(h.beta1_power));
  return k;
}

template <Rule R, class T>
__device__ inline void update(T& var, T* s1, T* s2, T g, const Coefficients<T>& k) {
  if constexpr (R == Rule::sgd) {
    var -= k.lr * g;
  } else if constexpr (R == Rule::momentum) {
    *s1 = *s1 * k.momentum + g;
    var -= k.nesterov ? g * k.lr + *s1 * k.momentum * k.lr : *s1 * k.lr;
  } else if constexpr (R == Rule::adam) {
    *s1 += (g - *s1) * k.one_minus_beta1;
    *s2 += (g * g - *s2) * k.one_minus_beta2;
    var -= (*s1 * k.adam_alpha) / (sqrt(*s2) + k.epsilon);
  } else {
    *s1 += g * g;
    var -= k.lr * g / (sqrt(*s1) + k.epsilon);
  }
}

template <Rule R, class T>
__global__ void dense_kernel(T* var, T* s1, T* s2, const T* grad, int64_t n, Coefficients<T> k) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(blockDim.x) * gridDim.x)
    update<R>(var[i], s1 ? s1 + i : nullptr, s2 ? s2 + i : nullptr, grad[i], k);
}

template <Rule R, class T>
__global__ void sparse_kernel(T* var, T* s1, T* s2, const T* grad, const void* indices, bool wide,
                              int64_t num_indices, int64_t cols, int64_t table_rows,
                              Coefficients<T> k) {
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < cols;
       c += int64_t(blockDim.x) * gridDim.x) {
    for (int64_t i = 0; i < num_indices; ++i) {
      const int64_t row = wide ? static_cast<const int64_t*>(indices)[i]
                               : int64_t(static_cast<const int32_t*>(indices)[i]);
      if (row < 0 || row >= table_rows) continue;  // GPU kernels cannot throw: skip the row
      const int64_t at = row * cols + c;
      update<R>(var[at], s1 ? s1 + at : nullptr, s2 ? s2 + at : nullptr, grad[i * cols + c], k);
    }
  }
}

template <Rule R, class T>
void dense(const OptimizerArgs& x) {
  if (x.count == 0) return;
  dense_kernel<R, T><<<blocks_for(x.count), kThreads, 0, stream_of(x.ctx.stream)>>>(
      static_cast<T*>(x.var), static_cast<T*>(x.slot1), static_cast<T*>(x.slot2),
      static_cast<const T*>(x.grad), x.count, coefficients<T>(x.hyper));
  check_launch("dense optimizer update");
}

template <Rule R, class T>
void sparse(const OptimizerArgs& x) {
  if (x.num_indices == 0 || x.row_elements == 0) return;
  sparse_kernel<R, T><<<blocks_for(x.row_elements), kThreads, 0, stream_of(x.ctx.stream)>>>(
      static_cast<T*>(x.var), static_cast<T*>(x.slot1), static_cast<T*>(x.slot2),
      static_cast<const T*>(x.grad), x.indices, x.index_dtype == DType::int64, x.num_indices,
      x.row_elements, x.table_rows, coefficients<T>(x.hyper));
  check_launch("sparse optimizer update");
}

}  // namespace

void register_optimizers(KernelRegistry& r) {
  using A = OptimizerArgs;
  add_float_kernels<A>(r, "apply_sgd", dense<Rule::sgd, float>, dense<Rule::sgd, double>);
  add_float_kernels<A>(r, "apply_momentum", dense<Rule::momentum, float>,
                       dense<Rule::momentum, double>);
  add_float_kernels<A>(r, "apply_adam", dense<Rule::adam, float>, dense<Rule::adam, double>);
  add_float_kernels<A>(r, "apply_adagrad", dense<Rule::adagrad, float>,
                       dense<Rule::adagrad, double>);
  add_float_kernels<A>(r, "sparse_apply_sgd", sparse<Rule::sgd, float>, sparse<Rule::sgd, double>);
  add_float_kernels<A>(r, "sparse_apply_momentum", sparse<Rule::momentum, float>,
                       sparse<Rule::momentum, double>);
  add_float_kernels<A>(r, "sparse_apply_adam", sparse<Rule::adam, float>,
                       sparse<Rule::adam, double>);
  add_float_kernels<A>(r, "sparse_apply_adagrad", sparse<Rule::adagrad, float>,
                       sparse<Rule::adagrad, double>);
}

}  // namespace troupe::cuda
