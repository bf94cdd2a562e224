#include "core/ps/partitioners.hpp"

#include <algorithm>
#include <string>

#include "core/ps/integer_math.hpp"
#include "core/status.hpp"

namespace troupe {
namespace {

void check_axis(const Shape& shape, size_t axis) {
  if (axis >= shape.rank())
    throw invalid_argument("cannot partition along axis " + std::to_string(axis) +
                           " when shape is only " + shape.to_string());
}

std::vector<int64_t> parts_with(const Shape& shape, size_t axis, int64_t count) {
  std::vector<int64_t> parts(shape.rank(), 1);
  parts[axis] = count;
  return parts;
}

std::string result_text(const std::vector<int64_t>& r) {
  std::string s = "[";
  for (size_t i = 0; i < r.size(); ++i) s += (i ? ", " : "") + std::to_string(r[i]);
  return s + "]";
}

}  // namespace

FixedShardsPartitioner::FixedShardsPartitioner(int64_t num_shards) : num_shards_(num_shards) {
  if (num_shards < 1)
    throw invalid_argument("FixedShardsPartitioner: num_shards must be at least 1, got " +
                           std::to_string(num_shards));
}

std::vector<int64_t> FixedShardsPartitioner::operator()(const Shape& shape, DType,
                                                        size_t axis) const {
  check_axis(shape, axis);
  return parts_with(shape, axis, std::min(num_shards_, shape[axis]));
}

MinSizePartitioner::MinSizePartitioner(int64_t min_shard_bytes, int64_t max_shards,
                                       int64_t bytes_per_string)
    : min_shard_bytes_(min_shard_bytes),
      max_shards_(max_shards),
      bytes_per_string_(bytes_per_string) {
  // TF validates nothing here; a zero divisor would raise ZeroDivisionError at the first call.
  if (min_shard_bytes < 1)
    throw invalid_argument("MinSizePartitioner: min_shard_bytes must be positive, got " +
                           std::to_string(min_shard_bytes));
}

std::vector<int64_t> MinSizePartitioner::operator()(const Shape& shape, DType dtype,
                                                    size_t axis) const {
  return partition(shape, int64_t(dtype_size(dtype)), axis);
}

std::vector<int64_t> MinSizePartitioner::for_strings(const Shape& shape, size_t axis) const {
  return partition(shape, bytes_per_string_, axis);
}

std::vector<int64_t> MinSizePartitioner::partition(const Shape& shape, int64_t element_bytes,
                                                   size_t axis) const {
  check_axis(shape, axis);
  const int64_t total = shape.num_elements() * element_bytes;
  // ceil(total / min) taken exactly on integers (the real-division ceil TF computes).
  const int64_t wanted = ceil_div(total, min_shard_bytes_);
  return parts_with(shape, axis,
                    std::max<int64_t>(1, std::min({shape[axis], max_shards_, wanted})));
}

MaxSizePartitioner::MaxSizePartitioner(int64_t max_shard_bytes, int64_t max_shards,
                                       int64_t bytes_per_string)
    : max_shard_bytes_(max_shard_bytes),
      max_shards_(max_shards),
      bytes_per_string_(bytes_per_string) {
  if (max_shard_bytes < 1)
    throw invalid_argument("MaxSizePartitioner: max_shard_bytes must be positive, got " +
                           std::to_string(max_shard_bytes));
  if (max_shards < 0)
    throw invalid_argument("MaxSizePartitioner: max_shards must be positive (0 = no limit), got " +
                           std::to_string(max_shards));
  if (bytes_per_string < 1)
    throw invalid_argument("MaxSizePartitioner: bytes_per_string must be positive, got " +
                           std::to_string(bytes_per_string));
}

std::vector<int64_t> MaxSizePartitioner::operator()(const Shape& shape, DType dtype,
                                                    size_t axis) const {
  return partition(shape, int64_t(dtype_size(dtype)), axis);
}

std::vector<int64_t> MaxSizePartitioner::for_strings(const Shape& shape, size_t axis) const {
  return partition(shape, bytes_per_string_, axis);
}

std::vector<int64_t> MaxSizePartitioner::partition(const Shape& shape, int64_t element_bytes,
                                                   size_t axis) const {
  check_axis(shape, axis);
  const int64_t dim = shape[axis];
  // TF divides by zero for an empty axis or an empty slice; the spec defines one shard.
  if (dim == 0 || shape.num_elements() == 0) return parts_with(shape, axis, 1);
  // bytes_per_slice = num_elements / dim * element_bytes is an exact integer (dim divides it).
  const int64_t bytes_per_slice = shape.num_elements() / dim * element_bytes;
  const int64_t slices_per_shard = std::max<int64_t>(1, max_shard_bytes_ / bytes_per_slice);
  int64_t shards = ceil_div(dim, slices_per_shard);
  if (max_shards_ > 0) shards = std::min(max_shards_, shards);
  return parts_with(shape, axis, shards);
}

void check_partition_result(const std::vector<int64_t>& result, const Shape& shape,
                            const std::string& variable) {
  bool ok = result.size() == shape.rank() && !result.empty() && result[0] >= 1;
  for (size_t i = 1; ok && i < result.size(); ++i) ok = result[i] == 1;
  if (!ok)
    throw invalid_argument("partitioner returned " + result_text(result) + " for variable '" +
                           variable + "' of shape " + shape.to_string() +
                           ": it must give one entry per axis, a first entry of at least 1 and "
                           "1 for every other axis (only axis 0 is partitioned)");
}

int64_t shard_count_for(const Partitioner* partitioner, const Shape& shape, DType dtype,
                        bool colocated, const std::string& variable) {
  if (!partitioner || !*partitioner || colocated || shape.rank() == 0) return 1;
  auto result = (*partitioner)(shape, dtype);
  check_partition_result(result, shape, variable);
  return std::min(result[0], shape[0]);
}

}  // namespace troupe
