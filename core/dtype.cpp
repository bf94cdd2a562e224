#include "core/dtype.hpp"

#include "core/status.hpp"

namespace troupe {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::float32: return 4;
    case DType::float64: return 8;
    case DType::int32: return 4;
    case DType::int64: return 8;
  }
  throw internal_error("dtype_size: invalid dtype " + std::to_string(int(dtype)));
}

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::float32: return "float32";
    case DType::float64: return "float64";
    case DType::int32: return "int32";
    case DType::int64: return "int64";
  }
  return "invalid";
}

DType parse_dtype(std::string_view name) {
  if (name == "float32" || name == "float") return DType::float32;
  if (name == "float64" || name == "double") return DType::float64;
  if (name == "int32") return DType::int32;
  if (name == "int64") return DType::int64;
  throw invalid_argument("unknown dtype '" + std::string(name) +
                         "' (expected float32, float64, int32 or int64)");
}

bool is_floating(DType dtype) { return dtype == DType::float32 || dtype == DType::float64; }

bool is_valid_dtype(int raw) { return raw == 1 || raw == 2 || raw == 3 || raw == 9; }

}  // namespace troupe
