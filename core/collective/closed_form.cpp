#include "core/collective/closed_form.hpp"

namespace troupe {

Tensor closed_form_input(int rank, int64_t count, DType dtype) {
  Tensor t(dtype, {count});
  dispatch_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    T* p = t.data<T>();
    for (int64_t i = 0; i < count; ++i) p[i] = T((rank + 1) * (i % 97 + 1) - rank);
  });
  return t;
}

double closed_form_sum(int group_size, int64_t i) {
  double s = 0;
  for (int r = 0; r < group_size; ++r) s += double((r + 1) * (i % 97 + 1) - r);
  return s;
}

double closed_form_total(int group_size, int64_t count) {
  double total = 0;
  for (int64_t i = 0; i < count; ++i) total += closed_form_sum(group_size, i);
  return total;
}

}  // namespace troupe
