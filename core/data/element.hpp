#pragma once
// What flows through an input pipeline: an Element is a tuple of tensors (features, label, ...);
// its static description is an ElementSpec, one TensorSpec per component, where a dimension may be
// unknown (after batch() without drop_remainder the leading one is).

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace troupe::data {

/// One dataset element: a tuple of tensors.
using Element = std::vector<Tensor>;

/// A dimension whose size is not known statically.
constexpr int64_t kUnknownDim = -1;
/// Cardinality of a dataset that never ends (repeat() forever).
constexpr int64_t kInfiniteCardinality = -1;
/// Cardinality that cannot be known without running the pipeline (filter, generators, files).
constexpr int64_t kUnknownCardinality = -2;

/// Static dtype and (partially known) shape of one component.
struct TensorSpec {
  DType dtype = DType::float32;
  std::vector<int64_t> dims;  ///< kUnknownDim where not known

  bool operator==(const TensorSpec& o) const { return dtype == o.dtype && dims == o.dims; }
  bool operator!=(const TensorSpec& o) const { return !(*this == o); }
  /// True when every dimension is known.
  bool fully_defined() const;
  /// True when `t` has this dtype and a shape matching every known dimension.
  bool matches(const Tensor& t) const;
  /// "float32[?, 3]".
  std::string to_string() const;
};

/// Static description of an Element.
using ElementSpec = std::vector<TensorSpec>;

/// Spec with exactly the shapes of `element`.
ElementSpec spec_of(const Element& element);
/// "(float32[?, 3], int64[?])".
std::string spec_to_string(const ElementSpec& spec);
/// Spec of one row of each component (drops the leading dimension); throws on scalars.
ElementSpec unbatched_spec(const ElementSpec& spec, const std::string& who);
/// Spec with a new leading dimension `rows` (may be kUnknownDim) prepended to each component.
ElementSpec batched_spec(const ElementSpec& spec, int64_t rows);

/// Row `i` of `t` as a zero-copy view of rank rank(t) - 1.
Tensor row_view(const Tensor& t, int64_t i);
/// Stacks equally shaped tensors into one of shape [n, ...]; throws naming `who` on a mismatch.
Tensor stack(const std::vector<Tensor>& rows, const std::string& who);
/// Concatenates tensors along dimension 0 (trailing shapes must agree).
Tensor concat_rows(const std::vector<Tensor>& parts, const std::string& who);
/// Zeros with the spec's shape, unknown dimensions (including the leading one) set to 0: the
/// "dummy" batch a replica without data receives.
Tensor empty_like_spec(const TensorSpec& spec);

}  // namespace troupe::data
