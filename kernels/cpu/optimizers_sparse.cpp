// Sparse (row) optimizer updates on the CPU. Row i of grad updates row indices[i] of var and its
// slots with the dense formula; rows are processed in index order, so a duplicated index applies
// its updates one after another (TF's SparseApply* ops do the same on the CPU).

#include <string>

#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/optimizer_math.hpp"

namespace troupe::cpu {
namespace {

// Calls update(row offset in the table, row offset in grad) for every index, checking bounds;
// the variable's and the slots' rows kPrefetchRows ahead are asked for meanwhile.
template <class T, class F>
void for_each_row(const OptimizerArgs& x, const char* op, F update) {
  const size_t row_bytes = size_t(x.row_elements) * sizeof(T);
  for (int64_t i = 0; i < x.num_indices; ++i) {
    const int64_t ahead =
        row_ahead(x.indices, x.index_dtype, i + kPrefetchRows, x.num_indices, x.table_rows);
    for (const void* table : {static_cast<const void*>(x.var), static_cast<const void*>(x.slot1),
                              static_cast<const void*>(x.slot2)})
      prefetch_row(table, ahead, row_bytes, true);
    const int64_t row = read_index(x.indices, x.index_dtype, i);
    if (row < 0 || row >= x.table_rows)
      throw out_of_range(std::string(op) + ": index " + std::to_string(row) + " at position " +
                         std::to_string(i) + " is outside [0, " + std::to_string(x.table_rows) +
                         ")");
    update(row * x.row_elements, i * x.row_elements);
  }
}

template <class T>
T* typed(void* p) {
  return static_cast<T*>(p);
}
template <class T>
const T* typed(const void* p) {
  return static_cast<const T*>(p);
}

template <class T>
void sparse_apply_sgd(const OptimizerArgs& x) {
  for_each_row<T>(x, "sparse_apply_sgd", [&](int64_t at, int64_t g) {
    sgd_span(typed<T>(x.var) + at, typed<T>(x.grad) + g, x.row_elements, x.hyper);
  });
}

template <class T>
void sparse_apply_momentum(const OptimizerArgs& x) {
  for_each_row<T>(x, "sparse_apply_momentum", [&](int64_t at, int64_t g) {
    momentum_span(typed<T>(x.var) + at, typed<T>(x.slot1) + at, typed<T>(x.grad) + g,
                  x.row_elements, x.hyper);
  });
}

template <class T>
void sparse_apply_adam(const OptimizerArgs& x) {
  for_each_row<T>(x, "sparse_apply_adam", [&](int64_t at, int64_t g) {
    adam_span(typed<T>(x.var) + at, typed<T>(x.slot1) + at, typed<T>(x.slot2) + at,
              typed<T>(x.grad) + g, x.row_elements, x.hyper);
  });
}

template <class T>
void sparse_apply_adagrad(const OptimizerArgs& x) {
  for_each_row<T>(x, "sparse_apply_adagrad", [&](int64_t at, int64_t g) {
    adagrad_span(typed<T>(x.var) + at, typed<T>(x.slot1) + at, typed<T>(x.grad) + g, x.row_elements,
                 x.hyper);
  });
}

}  // namespace

void register_sparse_optimizers(KernelRegistry& r) {
  using A = OptimizerArgs;
  add_float_kernels<A>(r, "sparse_apply_sgd", sparse_apply_sgd<float>, sparse_apply_sgd<double>);
  add_float_kernels<A>(r, "sparse_apply_momentum", sparse_apply_momentum<float>,
                       sparse_apply_momentum<double>);
  add_float_kernels<A>(r, "sparse_apply_adam", sparse_apply_adam<float>, sparse_apply_adam<double>);
  add_float_kernels<A>(r, "sparse_apply_adagrad", sparse_apply_adagrad<float>,
                       sparse_apply_adagrad<double>);
}

}  // namespace troupe::cpu
