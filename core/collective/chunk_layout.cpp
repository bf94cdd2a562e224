#include "core/collective/chunk_layout.hpp"

#include <algorithm>
#include <string>

#include "core/status.hpp"

namespace troupe {

std::vector<ElementRange> split_evenly(int64_t count, int parts) {
  if (parts <= 0)
    throw invalid_argument("split_evenly: parts must be positive, got " + std::to_string(parts));
  std::vector<ElementRange> out;
  int64_t base = count / parts, extra = count % parts, begin = 0;
  for (int p = 0; p < parts; ++p) {
    int64_t n = base + (p < extra ? 1 : 0);
    out.push_back({begin, n});
    begin += n;
  }
  return out;
}

int64_t chunk_elements(int64_t chunk_bytes, DType dtype) {
  if (chunk_bytes <= 0)
    throw invalid_argument("chunk_bytes must be positive, got " + std::to_string(chunk_bytes));
  return std::max<int64_t>(1, chunk_bytes / int64_t(dtype_size(dtype)));
}

std::vector<ElementRange> split_into_chunks(ElementRange range, int64_t max_elements) {
  std::vector<ElementRange> out;
  for (int64_t b = range.begin; b < range.end(); b += max_elements)
    out.push_back({b, std::min(max_elements, range.end() - b)});
  return out;
}

}  // namespace troupe
