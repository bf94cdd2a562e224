#pragma once
// Restoring a sharded variable into a different number of parts (spec variables.md R-SVSAVE,
// cluster-and-ps.md E6): the checkpoint is one logical full tensor made of row ranges, and each
// new part copies its rows out of whichever saved parts hold them.

#include <cstdint>
#include <string>
#include <vector>

namespace troupe {

/// A saved part's place in its variable: rows [first_row, first_row + rows).
struct SavedRows {
  int64_t first_row = 0;
  int64_t rows = 0;
};

/// Copy `rows` rows from saved part `source` (from its local row `source_row`) into new part
/// `target` (at its local row `target_row`).
struct RowCopy {
  size_t source = 0;
  int64_t source_row = 0;
  size_t target = 0;
  int64_t target_row = 0;
  int64_t rows = 0;
  bool operator==(const RowCopy& o) const {
    return source == o.source && source_row == o.source_row && target == o.target &&
           target_row == o.target_row && rows == o.rows;
  }
};

/// The copies that fill parts with first rows `target_offsets` (n + 1 entries, the last being
/// dim 0) from `saved` parts (any order). The saved parts must tile [0, dim 0) exactly; a gap,
/// an overlap or a different row count throws data_loss naming `variable` and the rows.
std::vector<RowCopy> plan_reshard(const std::string& variable, const std::vector<SavedRows>& saved,
                                  const std::vector<int64_t>& target_offsets);

}  // namespace troupe
