#pragma once
// Element types a Tensor may hold. Numbering is part of the wire format: never renumber.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace troupe {

/// Element type of a tensor; values match TensorFlow's DataType enum (DT_FLOAT = 1, ...).
enum class DType : uint8_t { float32 = 1, float64 = 2, int32 = 3, int64 = 9 };

/// Bytes per element.
size_t dtype_size(DType dtype);
/// "float32", "float64", "int32", "int64".
std::string_view dtype_name(DType dtype);
/// Inverse of dtype_name; throws invalid_argument naming the string for anything else.
DType parse_dtype(std::string_view name);
/// True for float32/float64.
bool is_floating(DType dtype);
/// True when `raw` is the value of a defined DType (for decoding untrusted bytes).
bool is_valid_dtype(int raw);

/// Maps a C++ element type to its DType: dtype_of<float>() == DType::float32.
template <class T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::float32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::float64;
}
template <>
constexpr DType dtype_of<int32_t>() {
  return DType::int32;
}
template <>
constexpr DType dtype_of<int64_t>() {
  return DType::int64;
}

/// Calls fn(T{}) with T the C++ type of `dtype`; the one place that switches on dtype.
template <class Fn>
decltype(auto) dispatch_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::float32: return fn(float{});
    case DType::float64: return fn(double{});
    case DType::int32: return fn(int32_t{});
    case DType::int64: return fn(int64_t{});
  }
  return fn(float{});  // unreachable for valid dtypes; keeps every path returning
}

}  // namespace troupe
