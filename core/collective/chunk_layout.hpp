#pragma once
// How a flat buffer is cut up: into n near-equal segments (ring) and each segment into chunks of
// at most `chunk_bytes`, so that reducing one chunk overlaps the transfer of the next.

#include <cstdint>
#include <vector>

#include "core/dtype.hpp"

namespace troupe {

/// A half-open element range [begin, begin + count) of a flat buffer.
struct ElementRange {
  int64_t begin = 0;
  int64_t count = 0;
  int64_t end() const { return begin + count; }
  bool operator==(const ElementRange& o) const { return begin == o.begin && count == o.count; }
};

/// `count` elements split into `parts` ranges; the first count % parts get one extra element.
std::vector<ElementRange> split_evenly(int64_t count, int parts);

/// Elements per chunk for `chunk_bytes` (at least 1); throws invalid_argument for chunk_bytes <= 0.
int64_t chunk_elements(int64_t chunk_bytes, DType dtype);

/// `range` cut into consecutive chunks of at most `max_elements`; empty when range is empty.
std::vector<ElementRange> split_into_chunks(ElementRange range, int64_t max_elements);

}  // namespace troupe
