#include "core/data/element.hpp"

#include <cstring>

namespace troupe::data {

bool TensorSpec::fully_defined() const {
  for (auto d : dims)
    if (d == kUnknownDim) return false;
  return true;
}

bool TensorSpec::matches(const Tensor& t) const {
  if (t.dtype() != dtype || t.shape().rank() != dims.size()) return false;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != kUnknownDim && dims[i] != t.shape()[i]) return false;
  return true;
}

std::string TensorSpec::to_string() const {
  std::string s = std::string(dtype_name(dtype)) + "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += dims[i] == kUnknownDim ? "?" : std::to_string(dims[i]);
  }
  return s + "]";
}

ElementSpec spec_of(const Element& element) {
  ElementSpec spec;
  for (const auto& t : element) spec.push_back({t.dtype(), t.shape().dims()});
  return spec;
}

std::string spec_to_string(const ElementSpec& spec) {
  std::string s = "(";
  for (size_t i = 0; i < spec.size(); ++i) s += (i ? ", " : "") + spec[i].to_string();
  return s + ")";
}

ElementSpec unbatched_spec(const ElementSpec& spec, const std::string& who) {
  ElementSpec out;
  for (size_t i = 0; i < spec.size(); ++i) {
    if (spec[i].dims.empty())
      throw invalid_argument(who + ": component " + std::to_string(i) +
                             " is a scalar and has no batch dimension");
    out.push_back({spec[i].dtype, {spec[i].dims.begin() + 1, spec[i].dims.end()}});
  }
  return out;
}

ElementSpec batched_spec(const ElementSpec& spec, int64_t rows) {
  ElementSpec out = spec;
  for (auto& c : out) c.dims.insert(c.dims.begin(), rows);
  return out;
}

Tensor row_view(const Tensor& t, int64_t i) {
  const auto& dims = t.shape().dims();
  return t.slice_rows(i, i + 1).reshape(Shape(std::vector<int64_t>(dims.begin() + 1, dims.end())));
}

Tensor stack(const std::vector<Tensor>& rows, const std::string& who) {
  if (rows.empty()) throw invalid_argument(who + ": nothing to stack");
  const Tensor& first = rows.front();
  std::vector<int64_t> dims = first.shape().dims();
  dims.insert(dims.begin(), int64_t(rows.size()));
  Tensor out(first.dtype(), Shape(dims));
  size_t row_bytes = first.byte_size();
  auto* dst = static_cast<char*>(out.raw_data());
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].dtype() != first.dtype() || rows[i].shape() != first.shape())
      throw invalid_argument(who + ": element " + std::to_string(i) + " is " +
                             rows[i].description() + " but element 0 is " + first.description());
    if (row_bytes) std::memcpy(dst + i * row_bytes, rows[i].raw_data(), row_bytes);
  }
  return out;
}

Tensor concat_rows(const std::vector<Tensor>& parts, const std::string& who) {
  if (parts.empty()) throw invalid_argument(who + ": nothing to concatenate");
  if (parts.size() == 1) return parts.front();  // zero-copy: the common case of a whole slice
  const Tensor& first = parts.front();
  if (first.shape().rank() == 0) throw invalid_argument(who + ": cannot concatenate scalars");
  int64_t rows = 0;
  for (const auto& p : parts) {
    if (p.dtype() != first.dtype() || p.shape().rank() != first.shape().rank() ||
        p.shape().row_elements() != first.shape().row_elements())
      throw invalid_argument(who + ": " + p.description() + " does not concatenate with " +
                             first.description());
    rows += p.shape()[0];
  }
  Tensor out(first.dtype(), first.shape().with_leading(rows));
  auto* dst = static_cast<char*>(out.raw_data());
  for (const auto& p : parts) {
    if (p.byte_size()) std::memcpy(dst, p.raw_data(), p.byte_size());
    dst += p.byte_size();
  }
  return out;
}

Tensor empty_like_spec(const TensorSpec& spec) {
  std::vector<int64_t> dims = spec.dims;
  if (!dims.empty()) dims[0] = 0;
  for (auto& d : dims)
    if (d == kUnknownDim) d = 0;
  return Tensor::zeros(spec.dtype, Shape(dims));
}

}  // namespace troupe::data
