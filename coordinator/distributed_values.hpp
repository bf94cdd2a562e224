#pragma once
// DistributedValues: one tensor per replica, in replica order (spec variables.md §1.3).
// PerReplica holds values that are not synchronised (what run() and dataset iteration return);
// Mirrored holds values kept identical (what reduce_to/update return). Both are plain value types:
// copying one copies tensor handles, never bytes.

#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace troupe {

/// Tuple of per-replica tensors with the devices they live on.
class DistributedValues {
 public:
  enum class Kind { per_replica, mirrored };

  DistributedValues(Kind kind, std::vector<Tensor> values, std::vector<std::string> devices = {});

  Kind kind() const { return kind_; }
  bool is_mirrored() const { return kind_ == Kind::mirrored; }
  size_t size() const { return values_.size(); }
  const std::vector<Tensor>& values() const { return values_; }
  const std::vector<std::string>& devices() const { return devices_; }
  /// Component `i` (out_of_range error naming i and the size otherwise).
  const Tensor& at(size_t i) const;
  /// Component 0, the representative copy.
  const Tensor& primary() const { return at(0); }
  /// "PerReplica:{0: float32[2], 1: float32[2]}".
  std::string description() const;

 private:
  Kind kind_;
  std::vector<Tensor> values_;
  std::vector<std::string> devices_;
};

/// Unsynchronised per-replica values.
class PerReplica : public DistributedValues {
 public:
  explicit PerReplica(std::vector<Tensor> values, std::vector<std::string> devices = {})
      : DistributedValues(Kind::per_replica, std::move(values), std::move(devices)) {}
};

/// Values kept identical on every replica.
class Mirrored : public DistributedValues {
 public:
  explicit Mirrored(std::vector<Tensor> values, std::vector<std::string> devices = {})
      : DistributedValues(Kind::mirrored, std::move(values), std::move(devices)) {}
};

}  // namespace troupe
