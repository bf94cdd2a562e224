#include "messages/tensor_wire.hpp"

#include <limits>

namespace troupe::wire {

caf::error save_tensor(caf::serializer& sink, const Tensor& t) {
  uint8_t dtype = t.defined() ? static_cast<uint8_t>(t.dtype()) : 0;
  if (auto err = sink(dtype)) return err;
  if (!t.defined()) return caf::error{};
  if (t.memory() != MemoryKind::host)
    return caf::make_error(
        caf::sec::invalid_argument,
        "cannot serialize GPU tensor " + t.description() + "; copy it to the host first");
  uint32_t rank = static_cast<uint32_t>(t.shape().rank());
  if (auto err = sink(rank)) return err;
  for (int64_t dim : t.shape().dims()) {
    if (auto err = sink(dim)) return err;
  }
  uint64_t byte_count = t.byte_size();
  if (auto err = sink(byte_count)) return err;
  return write_raw(sink, t.raw_data(), byte_count);
}

caf::error load_tensor(caf::deserializer& source, Tensor& t) {
  uint8_t dtype_raw = 0;
  if (auto err = source(dtype_raw)) return err;
  if (dtype_raw == 0) {
    t = Tensor{};
    return caf::error{};
  }
  if (!is_valid_dtype(dtype_raw))
    return malformed("tensor dtype value " + std::to_string(dtype_raw) + " is not a DType");
  DType dtype = static_cast<DType>(dtype_raw);
  uint32_t rank = 0;
  if (auto err = source(rank)) return err;
  if (rank > kMaxWireRank)
    return malformed("tensor rank " + std::to_string(rank) + " exceeds " +
                     std::to_string(kMaxWireRank));
  std::vector<int64_t> dims(rank);
  // Track the byte count as we go so a product that overflows is caught, not wrapped.
  uint64_t expected_bytes = dtype_size(dtype);
  const uint64_t limit = std::numeric_limits<int64_t>::max();
  for (uint32_t i = 0; i < rank; ++i) {
    if (auto err = source(dims[i])) return err;
    if (dims[i] < 0)
      return malformed("tensor dimension " + std::to_string(i) + " is negative (" +
                       std::to_string(dims[i]) + ")");
    uint64_t d = static_cast<uint64_t>(dims[i]);
    if (d != 0 && expected_bytes > limit / d)
      return malformed("tensor element count overflows at dimension " + std::to_string(i));
    expected_bytes *= d;
  }
  uint64_t byte_count = 0;
  if (auto err = source(byte_count)) return err;
  if (byte_count != expected_bytes)
    return malformed("tensor declares " + std::to_string(byte_count) + " bytes but " +
                     std::string(dtype_name(dtype)) + " shape needs " +
                     std::to_string(expected_bytes));
  if (byte_count > readable_bytes_left(source))
    return malformed("tensor needs " + std::to_string(byte_count) + " bytes but only " +
                     std::to_string(readable_bytes_left(source)) + " remain");
  try {
    Tensor decoded(dtype, Shape(std::move(dims)));
    if (auto err = read_raw(source, decoded.raw_data(), byte_count)) return err;
    t = std::move(decoded);
  } catch (const std::exception& e) {  // allocation failure or a shape the core rejects
    return malformed(std::string("tensor could not be built: ") + e.what());
  }
  return caf::error{};
}

}  // namespace troupe::wire
