#pragma once
// The one place that touches CAF-version-sensitive serialization APIs (CAF 0.17.6: data_processor
// based serializer/deserializer, apply_raw, binary_serializer over std::vector<char>). A move to
// CAF 0.18+ (save_inspector/load_inspector, value()/list()) changes this header and little else.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/deserializer.hpp>
#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/sec.hpp>
#include <caf/serializer.hpp>

namespace troupe::wire {

/// True when an inspect() call is writing an object to bytes.
template <class Inspector>
constexpr bool is_saving = std::is_base_of<caf::serializer, Inspector>::value;
/// True when an inspect() call is reading an object from bytes.
template <class Inspector>
constexpr bool is_loading = std::is_base_of<caf::deserializer, Inspector>::value;

/// Writes `size` bytes as one blob (no per-element encoding).
inline caf::error write_raw(caf::serializer& sink, const void* data, size_t size) {
  return size == 0 ? caf::error{} : sink.apply_raw(size, const_cast<void*>(data));
}

/// Reads `size` bytes as one blob into `data`.
inline caf::error read_raw(caf::deserializer& source, void* data, size_t size) {
  return size == 0 ? caf::error{} : source.apply_raw(size, data);
}

/// Bytes still unread when the source is a binary_deserializer (what BASP and our tests use);
/// otherwise "unknown" (max). Lets decoders refuse a declared size before allocating it.
inline size_t readable_bytes_left(caf::deserializer& source) {
  if (auto* binary = dynamic_cast<caf::binary_deserializer*>(&source)) return binary->remaining();
  return std::numeric_limits<size_t>::max();
}

/// A CAF error for malformed wire data; `what` names the problem.
inline caf::error malformed(const std::string& what) {
  return caf::make_error(caf::sec::invalid_argument, "malformed wire data: " + what);
}

/// Serializes `value` (anything with inspect) into a fresh byte vector, outside any actor system.
/// Actor handles in a message can only be (de)serialized with an actor system as context: pass
/// one through `context` for such types.
template <class T>
caf::error to_bytes(T& value, std::vector<char>& out, caf::actor_system* context = nullptr) {
  out.clear();
  if (context) {
    caf::binary_serializer sink{*context, out};
    return sink(value);
  }
  caf::binary_serializer sink{static_cast<caf::execution_unit*>(nullptr), out};
  return sink(value);
}

/// Deserializes `value` from `bytes`; fails unless every byte was consumed.
template <class T>
caf::error from_bytes(const char* bytes, size_t size, T& value,
                      caf::actor_system* context = nullptr) {
  auto run = [&](caf::binary_deserializer& source) -> caf::error {
    if (auto err = source(value)) return err;
    if (source.remaining() != 0)
      return malformed(std::to_string(source.remaining()) + " trailing bytes");
    return caf::error{};
  };
  if (context) {
    caf::binary_deserializer source{*context, bytes, size};
    return run(source);
  }
  caf::binary_deserializer source{static_cast<caf::execution_unit*>(nullptr), bytes, size};
  return run(source);
}

template <class T>
caf::error from_bytes(const std::vector<char>& bytes, T& value,
                      caf::actor_system* context = nullptr) {
  return from_bytes(bytes.data(), bytes.size(), value, context);
}

}  // namespace troupe::wire
