#pragma once
// Indexing a ShardedVariable along axis 0 without concatenating its shards (spec variables.md
// R-SLICE, R-SLICE-DEC): which shard and local row an integer index names, and which local slice
// of each shard a global slice takes.
//
// Decisions where the spec leaves one (named in tests/ps/sharded_index_test.cpp):
//  - integer lookup uses the half-open interval offset_i <= s < offset_{i+1} (erratum 3: TF's
//    strict comparison sends the first row of every non-final shard to the wrong shard);
//  - out-of-range slice bounds are clamped the way Python / NumPy clamp them (the spec's
//    recommendation for the §2.11 quirk), so sv[a:b:c] selects the rows a Python list would.

#include <cstdint>
#include <optional>
#include <vector>

namespace troupe {

/// A row of one shard.
struct ShardRow {
  int64_t shard = 0;
  int64_t row = 0;
  bool operator==(const ShardRow& o) const { return shard == o.shard && row == o.row; }
};

/// A Python slice; an absent field takes Python's default.
struct SliceSpec {
  std::optional<int64_t> start;
  std::optional<int64_t> stop;
  std::optional<int64_t> step;
};

/// A shard-local slice as R-SLICE-DEC writes it: stop absent means "run to the shard's first row"
/// (only with a negative step).
struct LocalSlice {
  int64_t start = 0;
  std::optional<int64_t> stop;
  int64_t step = 1;
  bool operator==(const LocalSlice& o) const {
    return start == o.start && stop == o.stop && step == o.step;
  }
};

/// The shard and local row of integer index `index` (negative counts from the end) over shards
/// whose first rows are `offsets` (n + 1 entries, the last being dim 0). Throws out_of_range
/// naming the index and dimension.
ShardRow locate_row(int64_t index, const std::vector<int64_t>& offsets);

/// R-SLICE-DEC: one local slice per shard (absent when the shard contributes nothing), in shard
/// order. Throws invalid_argument for a zero step.
std::vector<std::optional<LocalSlice>> decompose_slice(const SliceSpec& slice,
                                                       const std::vector<int64_t>& offsets);

/// Local rows a LocalSlice selects from a shard of `rows` rows, in slice order.
std::vector<int64_t> local_rows(const LocalSlice& slice, int64_t rows);

/// Every (shard, row) of sv[slice] in result order: shards in order for a positive step,
/// reversed for a negative one (R-SLICE step 3.3). Empty for an empty slice.
std::vector<ShardRow> slice_rows(const SliceSpec& slice, const std::vector<int64_t>& offsets);

}  // namespace troupe
