#pragma once
// In-process state shared by the replica threads of one group, their barrier actor and the caller
// of run(). Messages between actors are registered, serializable types
// (messages/replica_messages.hpp); what cannot be serialized — the C++ callables of a step and of
// a merge — is parked here and never leaves the process (DESIGN rule 5: code never crosses
// processes; only registered names would). Steps reach the replicas through `steps`, a
// shared-memory exchange, because a CAF message to a blocked replica thread and a scoped_actor
// receive of its answer cost more than the whole dispatch should (core/step_exchange.hpp).

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "actors/merge_rounds.hpp"
#include "core/collective/shared_memory_all_reduce.hpp"
#include "core/handoff.hpp"
#include "core/status.hpp"
#include "core/step_exchange.hpp"
#include "core/tensor.hpp"
#include "core/work_share.hpp"

namespace troupe {

/// One collective as a replica asks its port for it.
struct CollectiveCall {
  int kind = 0;                   ///< a CrossDeviceOpKind
  int64_t chunk_bytes = 1 << 20;  ///< ring pipelining granularity (peer actors)
  int64_t tensor_index = 0;       ///< pack index (hierarchical roots rotate with it)
};

/// The replica side of merge_call: implemented by the replica thread, used by ReplicaContext.
class MergePort {
 public:
  virtual ~MergePort() = default;
  /// Blocks until every replica has arrived at the same (step, call, tag) and the merge ran.
  virtual std::vector<Tensor> merge(const std::string& tag, std::vector<Tensor> args,
                                    MergeRunner runner) = 0;
  /// Runs one collective with the other replicas through this replica's collective peer actor;
  /// every replica must call collectives in the same order. Returns the summed result.
  virtual Tensor collective(const CollectiveCall& call, const Tensor& input) = 0;
  /// All-reduces `inputs` (one dtype; the same element counts on every replica) with the other
  /// replicas of this process in shared memory, as one collective in the same order as the
  /// others. Returns the flat sum of their concatenation (divided by the group size if `mean`).
  virtual Tensor shared_memory_all_reduce(const std::vector<Tensor>& inputs, bool mean) = 0;
  /// The same SUM followed by `products` (core/collective/shared_memory_all_reduce.hpp): the
  /// flat result holds the inputs' sums, then each product's [m, n] sum. By default each replica
  /// forms its products and sums them as inputs; the replica threads' port has the rendezvous
  /// compute them in row blocks instead.
  virtual Tensor shared_memory_all_reduce(const std::vector<Tensor>& inputs,
                                          const std::vector<OuterProduct>& products);
  /// Index of the next merge_call of this step (0-based).
  virtual uint32_t merge_calls() const = 0;
  /// Step id being run.
  virtual uint64_t step() const = 0;
};

/// A step as a replica runs it: its replica id, a merge port, its own arguments -> outputs.
using ReplicaTask = std::function<std::vector<Tensor>(int replica, MergePort& port,
                                                      const std::vector<Tensor>& args)>;

/// A step as the caller hands it to one replica.
struct StepOrder {
  uint64_t step = 0;
  std::shared_ptr<const ReplicaTask> task;
  std::vector<Tensor> args;  ///< this replica's arguments
};

/// State shared by one group's replicas and barrier.
struct ReplicaGroupShared {
  /// Where a replica parks in a merge_call round (the unit tests use it alone).
  using Slot = MergeSlot;

  explicit ReplicaGroupShared(int replicas, std::chrono::milliseconds merge_timeout)
      : slots(size_t(replicas)),
        steps(replicas),
        merge_timeout(merge_timeout),
        rounds(slots, merge_timeout),
        work_share(replicas) {}

  int size() const { return int(slots.size()); }

  /// The result buffer every replica of this group uses for collective `instance` (1-D,
  /// `count` elements): the first caller allocates it, each of the size() callers gets the
  /// same one, and the last releases the group's hold. Instances of steps before `step` that
  /// some replica never claimed (it failed first) are dropped then.
  Tensor collective_output(uint64_t step, int64_t instance, DType dtype, int64_t count);

  /// The meeting point of collective `instance` (of step `step`) for this group's replicas:
  /// created by the first caller, released after size() calls; rendezvous of earlier steps that
  /// some replica never reached are dropped. After abort_collectives(step) it comes pre-aborted.
  std::shared_ptr<SharedMemoryAllReduce> rendezvous(uint64_t step, int64_t instance);
  /// Aborts every shared-memory collective of `step` (a replica failed: nobody waits for it).
  void abort_collectives(uint64_t step, const std::string& why);

  /// A member of the group (barrier, collective peer) went away: every replica waiting in a
  /// merge_call or a shared-memory collective fails now with `why` (unavailable), and so does
  /// every later one. Called by the group's worker actor, which monitors the members.
  void fail_group(const std::string& why);
  /// Why the group failed; empty while it has not.
  std::string group_failure() const;

  std::vector<Slot> slots;
  StepExchange<StepOrder> steps;  ///< run(): orders to the replicas, their reports back
  std::chrono::milliseconds merge_timeout;
  MergeRounds rounds;  ///< merge_call, decided by the replica threads (after slots)
  /// Row blocks of one replica's large GEMM that a replica waiting in a collective runs.
  WorkShare work_share;

 private:
  /// One value per collective instance that each replica of the group claims once: the first
  /// claim makes it, the last releases it, and entries of earlier steps (some replica failed
  /// before claiming) are dropped. Used under collectives_mutex_.
  template <class T>
  class ClaimedPerInstance {
   public:
    template <class Make>
    T claim(uint64_t step, int64_t instance, int claimants, Make make) {
      for (auto it = entries_.begin(); it != entries_.end();)
        it = it->second.step < step ? entries_.erase(it) : std::next(it);
      auto [it, fresh] = entries_.try_emplace(instance);
      if (fresh) it->second = {step, make(), 0};
      T value = it->second.value;
      if (++it->second.claims == claimants) entries_.erase(it);
      return value;
    }
    template <class F>
    void for_step(uint64_t step, F f) {
      for (auto& [instance, entry] : entries_)
        if (entry.step == step) f(entry.value);
    }
    template <class F>
    void for_each(F f) {
      for (auto& [instance, entry] : entries_) f(entry.value);
    }

   private:
    struct Entry {
      uint64_t step = 0;
      T value{};
      int claims = 0;
    };
    std::map<int64_t, Entry> entries_;
  };

  mutable std::mutex collectives_mutex_;
  ClaimedPerInstance<Tensor> outputs_;
  ClaimedPerInstance<std::shared_ptr<SharedMemoryAllReduce>> rendezvous_;
  std::optional<uint64_t> aborted_step_;  ///< under collectives_mutex_
  std::string aborted_why_;
  std::string group_failure_;  ///< under collectives_mutex_
};

}  // namespace troupe
