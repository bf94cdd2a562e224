#include "core/ps/shard_layout.hpp"

#include <algorithm>

#include "core/status.hpp"

namespace troupe {

std::string shard_name(const std::string& variable, size_t index) {
  return variable + "/part_" + std::to_string(index);
}

ShardLayout::ShardLayout(std::string name, Shape full_shape, DType dtype,
                         const std::vector<int64_t>& rows)
    : name_(std::move(name)), full_shape_(std::move(full_shape)), dtype_(dtype) {
  row_offsets_.push_back(0);
  for (size_t i = 0; i < rows.size(); ++i) {
    ShardInfo info;
    info.name = shard_name(name_, i);
    info.shape = full_shape_.with_leading(rows[i]);
    info.offset.assign(full_shape_.rank(), 0);
    info.offset[0] = row_offsets_.back();
    shards_.push_back(std::move(info));
    row_offsets_.push_back(row_offsets_.back() + rows[i]);
  }
}

ShardLayout ShardLayout::split(const std::string& name, const Shape& full_shape, DType dtype,
                               int64_t num_shards) {
  if (full_shape.rank() == 0)
    throw invalid_argument("cannot shard scalar variable '" + name + "': sharding splits axis 0");
  if (full_shape[0] < 1)
    throw invalid_argument("cannot shard variable '" + name + "' of shape " +
                           full_shape.to_string() + ": axis 0 has no rows");
  if (num_shards < 1)
    throw invalid_argument("cannot split variable '" + name + "' into " +
                           std::to_string(num_shards) + " shards: need at least 1");
  const int64_t n = std::min(num_shards, full_shape[0]);
  const int64_t base = full_shape[0] / n, extra = full_shape[0] % n;
  std::vector<int64_t> rows(size_t(n), base);
  for (int64_t i = 0; i < extra; ++i) ++rows[size_t(i)];  // the first `extra` shards: one more
  return ShardLayout(name, full_shape, dtype, rows);
}

ShardLayout ShardLayout::of_shards(const std::string& name, const std::vector<Shape>& shapes,
                                   const std::vector<DType>& dtypes) {
  if (shapes.empty() || shapes.size() != dtypes.size())
    throw invalid_argument("ShardedVariable '" + name +
                           "' needs a non-empty list of shards, each with a dtype");
  std::vector<int64_t> rows;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (dtypes[i] != dtypes[0])
      throw invalid_argument("shards of ShardedVariable '" + name +
                             "' must have the same dtype: shard 0 is " +
                             std::string(dtype_name(dtypes[0])) + ", shard " + std::to_string(i) +
                             " is " + std::string(dtype_name(dtypes[i])));
    bool same = shapes[i].rank() == shapes[0].rank() && shapes[i].rank() > 0;
    for (size_t d = 1; same && d < shapes[i].rank(); ++d) same = shapes[i][d] == shapes[0][d];
    if (!same)
      throw invalid_argument("shards of ShardedVariable '" + name +
                             "' must have the same shapes except for the first axis: shard 0 is " +
                             shapes[0].to_string() + ", shard " + std::to_string(i) + " is " +
                             shapes[i].to_string());
    rows.push_back(shapes[i][0]);
  }
  int64_t total = 0;
  for (int64_t r : rows) total += r;
  return ShardLayout(name, shapes[0].with_leading(total), dtypes[0], rows);
}

std::vector<int64_t> ShardLayout::row_counts() const {
  std::vector<int64_t> rows;
  for (size_t i = 0; i + 1 < row_offsets_.size(); ++i)
    rows.push_back(row_offsets_[i + 1] - row_offsets_[i]);
  return rows;
}

}  // namespace troupe
