#pragma once
// Which ps task a new variable (or shard) goes to (spec cluster-and-ps.md §2.3, variables.md
// R-PS-RR, R-V2-VAR-1). Placement is a pure, deterministic function of the order in which
// variables are created, so every task computes the same map without talking to the others.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"
#include "core/shape.hpp"

namespace troupe {

/// What a placement policy may look at: the variable (or shard) being created.
struct PlacementRequest {
  std::string name;
  Shape shape;
  DType dtype = DType::float32;
};

/// num_elements × dtype size (TF's byte_size_load_fn; a scalar weighs one element).
int64_t byte_size_load(const PlacementRequest& request);

/// Picks a ps task for each variable, in creation order. Stateful: each call is one creation.
class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  /// The ps task index in [0, num_tasks()) for the next variable.
  virtual int64_t place(const PlacementRequest& request) = 0;
  virtual int64_t num_tasks() const = 0;
  /// "round_robin", "greedy" or "user".
  virtual std::string_view kind() const = 0;
};

/// TF's _RoundRobinStrategy: 0, 1, ..., n-1, 0, ... — the variable is ignored.
class RoundRobinPlacement final : public PlacementPolicy {
 public:
  /// Throws invalid_argument when num_tasks < 1 (R-PS-RR's num_ps == 0 guard).
  explicit RoundRobinPlacement(int64_t num_tasks);
  int64_t place(const PlacementRequest& request) override;
  int64_t num_tasks() const override { return num_tasks_; }
  std::string_view kind() const override { return "round_robin"; }

 private:
  int64_t num_tasks_;
  int64_t next_ = 0;
};

/// TF's GreedyLoadBalancingStrategy: the least-loaded task (ties to the lowest index) takes the
/// variable and its load. The default load is the byte size.
class GreedyLoadPlacement final : public PlacementPolicy {
 public:
  using LoadFn = std::function<int64_t(const PlacementRequest&)>;
  explicit GreedyLoadPlacement(int64_t num_tasks, LoadFn load = byte_size_load);
  int64_t place(const PlacementRequest& request) override;
  int64_t num_tasks() const override { return int64_t(loads_.size()); }
  std::string_view kind() const override { return "greedy"; }
  /// Load placed on each task so far.
  const std::vector<int64_t>& loads() const { return loads_; }

 private:
  LoadFn load_;
  std::vector<int64_t> loads_;
};

/// A user's policy (TF's ps_strategy callable): any function of the request. Its answer is
/// checked: an index outside [0, num_tasks) throws invalid_argument naming the variable.
class UserPlacement final : public PlacementPolicy {
 public:
  using Fn = std::function<int64_t(const PlacementRequest&)>;
  UserPlacement(int64_t num_tasks, Fn fn);
  int64_t place(const PlacementRequest& request) override;
  int64_t num_tasks() const override { return num_tasks_; }
  std::string_view kind() const override { return "user"; }

 private:
  int64_t num_tasks_;
  Fn fn_;
};

/// A built-in policy by name ("round_robin" or "greedy" by byte size); throws invalid_argument
/// naming the unknown name.
std::unique_ptr<PlacementPolicy> make_placement(std::string_view kind, int64_t num_tasks);

/// The device of ps task `task` as a variable reports it:
/// "/job:ps/replica:0/task:<k>/device:CPU:0".
std::string ps_device(int64_t task);

}  // namespace troupe
