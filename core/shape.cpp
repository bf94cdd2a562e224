#include "core/shape.hpp"

#include "core/status.hpp"

namespace troupe {

Shape::Shape(std::initializer_list<int64_t> dims) : dims_(dims) { validate(); }

Shape::Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) { validate(); }

void Shape::validate() const {
  for (size_t i = 0; i < dims_.size(); ++i)
    if (dims_[i] < 0)
      throw invalid_argument("shape dimension " + std::to_string(i) + " is negative (" +
                             std::to_string(dims_[i]) + ")");
}

int64_t Shape::num_elements() const {
  int64_t n = 1;
  for (auto d : dims_) n *= d;
  return n;
}

int64_t Shape::row_elements() const {
  int64_t n = 1;
  for (size_t i = 1; i < dims_.size(); ++i) n *= dims_[i];
  return n;
}

Shape Shape::with_leading(int64_t rows) const {
  auto dims = dims_;
  if (dims.empty()) throw invalid_argument("with_leading: a scalar has no leading dimension");
  dims[0] = rows;
  return Shape(std::move(dims));
}

std::string Shape::to_string() const {
  std::string s = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(dims_[i]);
  }
  return s + "]";
}

}  // namespace troupe
