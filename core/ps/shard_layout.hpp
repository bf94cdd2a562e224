#pragma once
// How a variable's rows are laid out over its shards (spec variables.md R-PS-SPLIT, R-SV): the
// contiguous "div" layout — shard i holds rows [offsets[i], offsets[i+1]), the first dim % n
// shards one row more — with the shard names `<name>/part_<i>` and their checkpoint offsets.

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/shape.hpp"

namespace troupe {

/// One shard of a sharded variable.
struct ShardInfo {
  std::string name;             ///< "<variable>/part_<i>"
  Shape shape;                  ///< (rows_i,) + full_shape[1:]
  std::vector<int64_t> offset;  ///< one entry per axis: (first row, 0, ..., 0)
};

/// A variable split by rows into shards.
class ShardLayout {
 public:
  /// R-PS-SPLIT: `full_shape` (rank >= 1) split into n = min(num_shards, full_shape[0]) shards.
  /// Throws invalid_argument for a scalar, an empty axis 0 or num_shards < 1, naming the variable.
  static ShardLayout split(const std::string& name, const Shape& full_shape, DType dtype,
                           int64_t num_shards);
  /// R-SV: the layout of existing shards, in order (a ShardedVariable built by hand). Throws
  /// invalid_argument when there are none, or when dtypes or any dimension but 0 differ.
  static ShardLayout of_shards(const std::string& name, const std::vector<Shape>& shapes,
                               const std::vector<DType>& dtypes);

  const std::string& name() const { return name_; }
  const Shape& full_shape() const { return full_shape_; }
  DType dtype() const { return dtype_; }
  size_t num_shards() const { return shards_.size(); }
  const std::vector<ShardInfo>& shards() const { return shards_; }
  const ShardInfo& shard(size_t i) const { return shards_.at(i); }
  /// Rows per shard.
  std::vector<int64_t> row_counts() const;
  /// First row of each shard plus the total: n + 1 entries, offsets()[n] == full_shape[0].
  const std::vector<int64_t>& row_offsets() const { return row_offsets_; }

 private:
  ShardLayout(std::string name, Shape full_shape, DType dtype, const std::vector<int64_t>& rows);

  std::string name_;
  Shape full_shape_;
  DType dtype_ = DType::float32;
  std::vector<ShardInfo> shards_;
  std::vector<int64_t> row_offsets_;
};

/// "<name>/part_<i>".
std::string shard_name(const std::string& variable, size_t index);

}  // namespace troupe
