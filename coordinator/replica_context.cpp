#include "coordinator/replica_context.hpp"

#include <algorithm>

#include "coordinator/collectives/replica_collectives.hpp"
#include "coordinator/context.hpp"
#include "coordinator/strategy.hpp"
#include "coordinator/tensor_reductions.hpp"

namespace troupe {
namespace {

/// Sets the calling thread into cross-replica context of `strategy` for one merge.
class CrossReplicaGuard {
 public:
  explicit CrossReplicaGuard(Strategy& strategy) : saved_(this_thread_context()) {
    auto& c = this_thread_context();
    c.strategy = &strategy;
    c.replica = nullptr;
    c.update_replica_id = -1;
  }
  ~CrossReplicaGuard() { this_thread_context() = saved_; }

 private:
  ThreadContext saved_;
};

int64_t byte_size(const std::vector<Tensor>& values) {
  int64_t bytes = 0;
  for (const auto& v : values) bytes += int64_t(v.byte_size());
  return bytes;
}

/// Reports the span from construction to destruction to an observer, if there is one.
class ObservedSpan {
 public:
  ObservedSpan(const CollectiveObserver& observer, const char* kind, int64_t bytes)
      : observer_(observer), kind_(kind), bytes_(bytes) {
    if (observer_) begin_ = std::chrono::steady_clock::now();
  }
  ~ObservedSpan() {
    if (observer_) observer_(kind_, begin_, std::chrono::steady_clock::now(), bytes_);
  }
  ObservedSpan(const ObservedSpan&) = delete;
  ObservedSpan& operator=(const ObservedSpan&) = delete;

 private:
  const CollectiveObserver& observer_;
  const char* kind_;
  int64_t bytes_;
  std::chrono::steady_clock::time_point begin_;
};

}  // namespace

ReplicaContext::ReplicaContext(Strategy& strategy, int replica_id, MergePort& port)
    : strategy_(strategy), replica_id_(replica_id), port_(port) {}

ReplicaContext::~ReplicaContext() = default;

ReplicaCollectives& ReplicaContext::collectives() {
  if (!collectives_) collectives_ = std::make_unique<ReplicaCollectives>(*this);
  return *collectives_;
}

int ReplicaContext::num_replicas_in_sync() const { return strategy_.num_replicas_in_sync(); }

const std::string& ReplicaContext::device() const {
  return strategy_.extended().worker_devices().at(size_t(replica_id_));
}

std::vector<Tensor> ReplicaContext::merge_call(const MergeFn& fn, std::vector<Tensor> args,
                                               const std::string& tag) {
  Strategy* strategy = &strategy_;
  MergeRunner runner = [strategy, fn, tag](std::vector<std::vector<Tensor>> by_replica) {
    const size_t n = by_replica.size();
    const size_t arity = by_replica[0].size();
    for (size_t r = 1; r < n; ++r)
      if (by_replica[r].size() != arity)
        throw invalid_argument("merge_call '" + tag + "': replica 0 passed " +
                               std::to_string(arity) + " argument(s), replica " +
                               std::to_string(r) + " passed " +
                               std::to_string(by_replica[r].size()));
    std::vector<PerReplica> grouped;
    for (size_t a = 0; a < arity; ++a) {
      std::vector<Tensor> parts;
      for (size_t r = 0; r < n; ++r) parts.push_back(std::move(by_replica[r][a]));
      grouped.emplace_back(std::move(parts), strategy->extended().worker_devices());
    }
    CrossReplicaGuard guard(*strategy);
    auto merged = fn(*strategy, grouped);
    // select_replica: replica r takes component r, or the only component.
    std::vector<std::vector<Tensor>> out(n);
    for (auto& value : merged) {
      if (value.size() != 1 && value.size() != n)
        throw invalid_argument("merge_call '" + tag + "': merge function returned a value with " +
                               std::to_string(value.size()) + " components for " +
                               std::to_string(n) + " replicas");
      for (size_t r = 0; r < n; ++r) out[r].push_back(value.at(value.size() == 1 ? 0 : r));
    }
    return out;
  };
  ObservedSpan span(observer_, "merge_call", byte_size(args));
  return port_.merge(tag, std::move(args), std::move(runner));
}

Tensor ReplicaContext::all_reduce(ReduceOp op, const Tensor& value) {
  return all_reduce(op, std::vector<Tensor>{value}).at(0);
}

std::vector<Tensor> ReplicaContext::all_reduce(ReduceOp op, const std::vector<Tensor>& values) {
  ObservedSpan span(observer_, "all_reduce", byte_size(values));
  return collectives().all_reduce(op, values);
}

std::vector<Tensor> ReplicaContext::all_reduce_with_products(
    const std::vector<Tensor>& values, const std::vector<OuterProduct>& products) {
  ObservedSpan span(observer_, "all_reduce", byte_size(values) + outer_product_bytes(products));
  return collectives().all_reduce_with_products(values, products);
}

Tensor ReplicaContext::broadcast(const Tensor& value, int root) {
  ObservedSpan span(observer_, "broadcast", int64_t(value.byte_size()));
  return collectives().broadcast(value, root);
}

Tensor ReplicaContext::all_gather(const Tensor& value) {
  ObservedSpan span(observer_, "all_gather", int64_t(value.byte_size()));
  return collectives().all_gather(value);
}

Transport ReplicaContext::last_collective_transport() const {
  return collectives_ ? collectives_->last_transport() : Transport::identity;
}

}  // namespace troupe
