#include "core/ps/placement.hpp"

#include <algorithm>

#include "core/status.hpp"

namespace troupe {
namespace {

void check_tasks(int64_t num_tasks, std::string_view kind) {
  if (num_tasks < 1)
    throw invalid_argument(std::string(kind) + " placement needs at least one ps task, got " +
                           std::to_string(num_tasks));
}

}  // namespace

int64_t byte_size_load(const PlacementRequest& r) {
  return r.shape.num_elements() * int64_t(dtype_size(r.dtype));
}

RoundRobinPlacement::RoundRobinPlacement(int64_t num_tasks) : num_tasks_(num_tasks) {
  check_tasks(num_tasks, "round_robin");
}

int64_t RoundRobinPlacement::place(const PlacementRequest&) {
  const int64_t task = next_;
  next_ = (next_ + 1) % num_tasks_;
  return task;
}

GreedyLoadPlacement::GreedyLoadPlacement(int64_t num_tasks, LoadFn load) : load_(std::move(load)) {
  check_tasks(num_tasks, "greedy");
  if (!load_) throw invalid_argument("greedy placement needs a load function");
  loads_.assign(size_t(num_tasks), 0);
}

int64_t GreedyLoadPlacement::place(const PlacementRequest& request) {
  // min_element returns the first minimum: ties go to the lowest index.
  auto it = std::min_element(loads_.begin(), loads_.end());
  *it += load_(request);
  return int64_t(it - loads_.begin());
}

UserPlacement::UserPlacement(int64_t num_tasks, Fn fn) : num_tasks_(num_tasks), fn_(std::move(fn)) {
  check_tasks(num_tasks, "user");
  if (!fn_) throw invalid_argument("user placement needs a callable policy");
}

int64_t UserPlacement::place(const PlacementRequest& request) {
  const int64_t task = fn_(request);
  if (task < 0 || task >= num_tasks_)
    throw invalid_argument("placement policy put variable '" + request.name + "' on ps task " +
                           std::to_string(task) + ", but the cluster has ps tasks 0.." +
                           std::to_string(num_tasks_ - 1));
  return task;
}

std::unique_ptr<PlacementPolicy> make_placement(std::string_view kind, int64_t num_tasks) {
  if (kind == "round_robin") return std::make_unique<RoundRobinPlacement>(num_tasks);
  if (kind == "greedy") return std::make_unique<GreedyLoadPlacement>(num_tasks);
  throw invalid_argument("unknown placement '" + std::string(kind) +
                         "' (use \"round_robin\" or \"greedy\")");
}

std::string ps_device(int64_t task) {
  return "/job:ps/replica:0/task:" + std::to_string(task) + "/device:CPU:0";
}

}  // namespace troupe
