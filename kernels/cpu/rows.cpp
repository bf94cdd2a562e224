// Row gather and scatter-add on the CPU (embedding lookups and their gradients).

#include <cstring>
#include <string>

#include "kernels/cpu/cpu_kernels.hpp"

namespace troupe::cpu {
namespace {

int64_t checked_row(const RowIndexArgs& x, int64_t i, const char* op) {
  const int64_t row = read_index(x.indices, x.index_dtype, i);
  if (row < 0 || row >= x.table_rows)
    throw out_of_range(std::string(op) + ": index " + std::to_string(row) + " at position " +
                       std::to_string(i) + " is outside [0, " + std::to_string(x.table_rows) + ")");
  return row;
}

template <class T>
void gather_rows(const RowIndexArgs& x) {
  const T* table = static_cast<const T*>(x.table);
  T* out = static_cast<T*>(x.out);
  const size_t row_bytes = size_t(x.row_elements) * sizeof(T);
  for (int64_t i = 0; i < x.num_indices; ++i) {
    prefetch_row(
        table, row_ahead(x.indices, x.index_dtype, i + kPrefetchRows, x.num_indices, x.table_rows),
        row_bytes, false);
    const int64_t row = checked_row(x, i, "gather_rows");
    if (row_bytes) std::memcpy(out + i * x.row_elements, table + row * x.row_elements, row_bytes);
  }
}

// Rows are applied in index order, so a duplicated index sees every update in turn (as TF's
// scatter ops on one device): for update the last one wins.
template <class T, class Apply>
void scatter_rows(const RowIndexArgs& x, const char* op, Apply apply) {
  T* table = static_cast<T*>(x.table);
  const T* updates = static_cast<const T*>(x.updates);
  for (int64_t i = 0; i < x.num_indices; ++i) {
    prefetch_row(
        table, row_ahead(x.indices, x.index_dtype, i + kPrefetchRows, x.num_indices, x.table_rows),
        size_t(x.row_elements) * sizeof(T), true);
    const int64_t row = checked_row(x, i, op);
    T* __restrict dst = table + row * x.row_elements;
    const T* __restrict src = updates + i * x.row_elements;
    for (int64_t c = 0; c < x.row_elements; ++c) dst[c] = apply(dst[c], src[c]);
  }
}

template <class T>
void scatter_sub_rows(const RowIndexArgs& x) {
  scatter_rows<T>(x, "scatter_sub_rows", [](T d, T s) { return d - s; });
}

template <class T>
void scatter_update_rows(const RowIndexArgs& x) {
  scatter_rows<T>(x, "scatter_update_rows", [](T, T s) { return s; });
}

template <class T>
void scatter_add_rows(const RowIndexArgs& x) {
  scatter_rows<T>(x, "scatter_add_rows", [](T d, T s) { return d + s; });
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

}  // namespace troupe::cpu
