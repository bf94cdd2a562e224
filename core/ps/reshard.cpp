#include "core/ps/reshard.hpp"

#include <algorithm>
#include <numeric>

#include "core/status.hpp"

namespace troupe {

std::vector<RowCopy> plan_reshard(const std::string& variable, const std::vector<SavedRows>& saved,
                                  const std::vector<int64_t>& target_offsets) {
  if (target_offsets.size() < 2)
    throw invalid_argument("restoring '" + variable + "' needs at least one target part");
  const int64_t dim0 = target_offsets.back();
  std::vector<size_t> order(saved.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return saved[a].first_row < saved[b].first_row; });
  int64_t next = 0;
  for (size_t i : order) {
    if (saved[i].first_row != next || saved[i].rows < 0)
      throw data_loss("checkpoint of '" + variable + "' is not one tiling of its rows: a part " +
                      (saved[i].first_row > next ? "starts at row " : "overlaps at row ") +
                      std::to_string(saved[i].first_row) + " where row " + std::to_string(next) +
                      " was expected");
    next += saved[i].rows;
  }
  if (next != dim0)
    throw data_loss("checkpoint of '" + variable + "' holds rows [0, " + std::to_string(next) +
                    "), the variable has " + std::to_string(dim0) + " rows");
  // Walk both tilings together: each step copies the overlap of one saved and one new part.
  std::vector<RowCopy> plan;
  size_t s = 0, t = 0;
  int64_t row = 0;
  while (row < dim0) {
    const SavedRows& src = saved[order[s]];
    const int64_t src_end = src.first_row + src.rows, dst_end = target_offsets[t + 1];
    const int64_t end = std::min(src_end, dst_end);
    if (end > row)
      plan.push_back({order[s], row - src.first_row, t, row - target_offsets[t], end - row});
    row = end;
    if (row >= src_end) ++s;
    if (row >= dst_end) ++t;
  }
  return plan;
}

}  // namespace troupe
