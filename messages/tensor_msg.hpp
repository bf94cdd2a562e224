#pragma once
// Tensor payload messages: a whole tensor, or one chunk of a large one (CAF 0.17 handles single
// messages of hundreds of MiB non-linearly, so big tensors travel in chunks).

#include <cstdint>
#include <vector>

#include "core/tensor.hpp"
#include "messages/tensor_wire.hpp"

namespace troupe {

/// A tensor with a caller-chosen id (request correlation, variable id, ...).
struct tensor_msg {
  uint64_t id = 0;
  Tensor tensor;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, tensor_msg& x) {
  return f(caf::meta::type_name("tensor_msg"), x.id, x.tensor);
}

/// Elements [element_offset, element_offset + values.num_elements()) of a row-major tensor of
/// `shape`, sent as chunk `index` of `count`.
struct tensor_chunk_msg {
  uint64_t transfer_id = 0;
  uint32_t index = 0;
  uint32_t count = 0;
  std::vector<int64_t> shape;
  int64_t element_offset = 0;
  Tensor values;  ///< rank-1; its dtype is the whole tensor's dtype
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, tensor_chunk_msg& x) {
  return f(caf::meta::type_name("tensor_chunk_msg"), x.transfer_id, x.index, x.count, x.shape,
           x.element_offset, x.values);
}

}  // namespace troupe
