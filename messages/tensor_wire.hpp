#pragma once
// How a troupe::Tensor field crosses a process boundary. Inside one process CAF never serializes
// messages, so a Tensor in a message is just a shared handle (no copy). On the wire:
//
// Integers are big-endian (CAF 0.17 binary_serializer); the blob is host (little-endian) order.
//   uint8  dtype        0 = undefined handle, else DType value (1, 2, 3, 9)
//   uint32 rank         <= kMaxWireRank
//   int64  dims[rank]   each >= 0
//   uint64 byte_count   must equal product(dims) * dtype_size
//   bytes  [byte_count] one contiguous blob, host byte order (apply_raw; never per element)
//
// Decoding validates each field before it allocates, and returns a caf::error naming the problem.

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "messages/caf_compat.hpp"

namespace troupe {

/// Largest rank accepted from the wire (TensorFlow's limit is 254; no real tensor comes close).
constexpr uint32_t kMaxWireRank = 32;

namespace wire {

/// Writes `t` as described at the top of this file.
caf::error save_tensor(caf::serializer& sink, const Tensor& t);
/// Reads a tensor written by save_tensor, validating every header field.
caf::error load_tensor(caf::deserializer& source, Tensor& t);

}  // namespace wire

/// CAF 0.17 inspect for Tensor fields of messages (found by ADL).
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Tensor& x) {
  if constexpr (wire::is_saving<Inspector>) {
    return wire::save_tensor(f, x);
  } else if constexpr (wire::is_loading<Inspector>) {
    return wire::load_tensor(f, x);
  } else {  // to_string / deep_to_string
    std::string text = x.defined() ? x.description() : std::string("undefined");
    return f(caf::meta::type_name("tensor"), text);
  }
}

}  // namespace troupe
