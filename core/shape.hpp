#pragma once
// Tensor shape: a list of non-negative dimension sizes. Rank 0 is a scalar.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace troupe {

/// Dimensions of a tensor, outermost first.
class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(std::vector<int64_t> dims);

  size_t rank() const { return dims_.size(); }
  int64_t dim(size_t i) const { return dims_.at(i); }
  int64_t operator[](size_t i) const { return dims_[i]; }
  const std::vector<int64_t>& dims() const { return dims_; }
  /// Product of the dimensions (1 for a scalar).
  int64_t num_elements() const;
  /// Elements per index of dimension 0 (product of dims[1:]); 1 for rank <= 1.
  int64_t row_elements() const;
  /// Same shape with dimension 0 replaced (used for batches and row slices).
  Shape with_leading(int64_t rows) const;
  /// "[2, 3]"; "[]" for a scalar.
  std::string to_string() const;

  bool operator==(const Shape& o) const { return dims_ == o.dims_; }
  bool operator!=(const Shape& o) const { return dims_ != o.dims_; }

 private:
  void validate() const;
  std::vector<int64_t> dims_;
};

}  // namespace troupe
