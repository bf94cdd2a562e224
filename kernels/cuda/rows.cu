// CUDA gather_rows and the scatter_*_rows family. Out-of-range indices: gather writes zeros and
// scatter skips the row (TF's GPU kernels behave so; only the CPU kernels can throw).

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_kernel_list.hpp"
#include "kernels/kernel_args.hpp"

namespace troupe::cuda {
namespace {

__device__ inline int64_t index_at(const void* indices, bool wide, int64_t i) {
  return wide ? static_cast<const int64_t*>(indices)[i]
              : int64_t(static_cast<const int32_t*>(indices)[i]);
}

template <class T>
__global__ void gather_kernel(const T* table, const void* indices, bool wide, T* out, int64_t n,
                              int64_t row_elements, int64_t table_rows) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n;
       e += int64_t(blockDim.x) * gridDim.x) {
    const int64_t i = e / row_elements, c = e % row_elements;
    const int64_t row = index_at(indices, wide, i);
    out[e] = (row >= 0 && row < table_rows) ? table[row * row_elements + c] : T(0);
  }
}

template <class T>
void gather_rows(const RowIndexArgs& x) {
  const int64_t n = x.num_indices * x.row_elements;
  if (n == 0) return;
  gather_kernel<<<blocks_for(n), kThreads, 0, stream_of(x.ctx.stream)>>>(
      static_cast<const T*>(x.table), x.indices, x.index_dtype == DType::int64,
      static_cast<T*>(x.out), n, x.row_elements, x.table_rows);
  check_launch("gather_rows");
}

// One thread per column walks the indices in order, so duplicated rows see every update in turn
// exactly as on the CPU (deterministic, no atomics). Out-of-range rows are skipped.
template <class T, class Apply>
__global__ void scatter_kernel(T* table, const void* indices, bool wide, const T* updates,
                               int64_t num_indices, int64_t cols, int64_t table_rows, Apply apply) {
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < cols;
       c += int64_t(blockDim.x) * gridDim.x) {
    for (int64_t i = 0; i < num_indices; ++i) {
      const int64_t row = index_at(indices, wide, i);
      if (row < 0 || row >= table_rows) continue;
      T& dst = table[row * cols + c];
      dst = apply(dst, updates[i * cols + c]);
    }
  }
}

template <class T, class Apply>
void scatter_rows(const RowIndexArgs& x, const char* name, Apply apply) {
  if (x.num_indices == 0 || x.row_elements == 0) return;
  scatter_kernel<<<blocks_for(x.row_elements), kThreads, 0, stream_of(x.ctx.stream)>>>(
      static_cast<T*>(x.table), x.indices, x.index_dtype == DType::int64,
      static_cast<const T*>(x.updates), x.num_indices, x.row_elements, x.table_rows, apply);
  check_launch(name);
}

template <class T>
struct AddRow {
  __device__ T operator()(T d, T s) const { return d + s; }
};
template <class T>
struct SubRow {
  __device__ T operator()(T d, T s) const { return d - s; }
};
template <class T>
struct UpdateRow {
  __device__ T operator()(T, T s) const { return s; }
};

template <class T>
void scatter_add_rows(const RowIndexArgs& x) {
  scatter_rows<T>(x, "scatter_add_rows", AddRow<T>{});
}
template <class T>
void scatter_sub_rows(const RowIndexArgs& x) {
  scatter_rows<T>(x, "scatter_sub_rows", SubRow<T>{});
}
template <class T>
void scatter_update_rows(const RowIndexArgs& x) {
  scatter_rows<T>(x, "scatter_update_rows", UpdateRow<T>{});
}

}  // namespace

void register_rows(KernelRegistry& r) {
  using A = RowIndexArgs;
  add_numeric_kernels<A>(r, "gather_rows", gather_rows<float>, gather_rows<double>,
                         gather_rows<int32_t>, gather_rows<int64_t>);
  add_numeric_kernels<A>(r, "scatter_add_rows", scatter_add_rows<float>, scatter_add_rows<double>,
                         scatter_add_rows<int32_t>, scatter_add_rows<int64_t>);
  add_numeric_kernels<A>(r, "scatter_sub_rows", scatter_sub_rows<float>, scatter_sub_rows<double>,
                         scatter_sub_rows<int32_t>, scatter_sub_rows<int64_t>);
  add_numeric_kernels<A>(r, "scatter_update_rows", scatter_update_rows<float>,
                         scatter_update_rows<double>, scatter_update_rows<int32_t>,
                         scatter_update_rows<int64_t>);
}

}  // namespace troupe::cuda
