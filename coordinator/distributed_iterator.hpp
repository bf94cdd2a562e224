#pragma once
// DistributedIterator (spec §2.8): pulls one step from every input worker's dataset_iterator
// actor, counts the replicas that got data across ALL workers, and emits a step while any replica
// anywhere has data — replicas without data get an empty batch (leading dimension 0) built from
// the element spec. Only when the count is 0 everywhere does the iteration end. Not thread-safe:
// one caller pulls from it.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/fwd.hpp>

#include "coordinator/distributed_values.hpp"
#include "coordinator/input_workers.hpp"
#include "core/data/dataset.hpp"
#include "core/status.hpp"

namespace troupe {

/// Everything a DistributedIterator needs: one pipeline per input worker.
struct DistributedIteratorConfig {
  std::vector<data::Dataset> worker_datasets;  ///< one per input worker, in worker order
  int64_t replicas_per_worker = 1;
  data::ElementSpec element_spec;    ///< per-replica spec; dummies are built from it
  std::vector<std::string> devices;  ///< one per replica, worker-major
  InputOptions options;
  /// The strategy the dataset was distributed for: get_next refuses to run while a different
  /// strategy's scope is current (only compared, never dereferenced).
  const void* strategy = nullptr;
  /// Across processes (this process is one of several workers): how many replicas of every
  /// worker got data this step, given this worker's count. Every worker calls it once per step,
  /// so all reach the same end-of-data decision (spec §2.8.4). Unset: this process's count.
  std::function<int64_t(int64_t)> count_across_workers;
  /// Workers (processes) in sync, this one included: num_replicas_in_sync counts all of theirs.
  int64_t num_workers = 1;
};

/// Iterates a distributed dataset: one PerReplica per element component per step.
class DistributedIterator {
 public:
  /// Spawns one dataset_iterator actor per worker dataset on `system`.
  DistributedIterator(caf::actor_system& system, DistributedIteratorConfig config);
  /// Exits every dataset_iterator actor (a live one would hang the actor system's shutdown).
  ~DistributedIterator();
  DistributedIterator(DistributedIterator&&) noexcept;
  DistributedIterator& operator=(DistributedIterator&&) noexcept;

  /// The next step: result[c] holds component c of every replica's batch, replica order.
  /// Throws out_of_range at the end of the data, the pipeline's own error (naming file and
  /// offset) when an input worker failed, unavailable/deadline_exceeded when one is gone or
  /// does not answer within InputOptions::request_timeout, failed_precondition inside the scope
  /// of a different strategy.
  std::vector<PerReplica> get_next();
  /// Like get_next, but nullopt at the end of the data.
  std::optional<std::vector<PerReplica>> get_next_as_optional();
  /// The next `count` steps, as `count` calls of get_next_as_optional would give them, with one
  /// round trip to the input workers for all (what a strategy.run of several steps takes):
  /// fewer only where the data ends. Errors as get_next's (the steps before a failed one are
  /// consumed and not returned); invalid_argument for a negative count.
  std::vector<std::vector<PerReplica>> get_next_steps(int64_t count);
  /// Asks the input workers now for the `count` steps after those already asked for, without
  /// waiting: they are answered while the caller does other work (a strategy.run), and the next
  /// get_next_steps / get_next takes them first. Nothing changes for the caller otherwise: save()
  /// first hands such steps back to their workers, so a saved position is that of the steps
  /// handed out; restore() drops them. invalid_argument for a negative count.
  void prefetch_steps(int64_t count);
  /// What get_next throws at the end of the data (out_of_range).
  static Error end_of_sequence();
  /// Per-replica element spec (each PerReplica component follows it).
  const data::ElementSpec& element_spec() const;
  int64_t num_input_workers() const;
  /// Replicas in sync across every worker (TF's value): this process's times the workers.
  int64_t num_replicas_in_sync() const;
  /// The position after the steps handed out so far, of every input worker, as bytes.
  std::string save();
  /// Continues from save()'s bytes: the next steps are exactly those the saved iterator would
  /// have produced. Throws data_loss on corrupt bytes, invalid_argument for a different layout.
  void restore(std::string_view state);
  /// The dataset_iterator actors, worker order (for fault-injection tests).
  const std::vector<caf::actor>& input_worker_actors() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Input iterator over the steps of a DistributedIterator, for range-for loops over a
/// DistributedDataset; a default-constructed one is the end.
class DistributedStepCursor {
 public:
  using value_type = std::vector<PerReplica>;
  DistributedStepCursor() = default;
  explicit DistributedStepCursor(std::shared_ptr<DistributedIterator> iterator);
  const value_type& operator*() const { return *current_; }
  const value_type* operator->() const { return &*current_; }
  DistributedStepCursor& operator++();
  bool operator==(const DistributedStepCursor& o) const { return at_end() == o.at_end(); }
  bool operator!=(const DistributedStepCursor& o) const { return !(*this == o); }

 private:
  bool at_end() const { return !current_.has_value(); }
  std::shared_ptr<DistributedIterator> iterator_;
  std::optional<value_type> current_;
};

}  // namespace troupe
