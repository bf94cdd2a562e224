#pragma once
// TF2's ClusterCoordinator (spec cluster-and-ps.md §7.4–7.9) over worker actors in this actor
// system. Steps are registered by name (a worker receives a name, not code — DESIGN rule 5);
// schedule(name, args) queues one closure and returns its RemoteValue at once; closures go to
// idle workers first, up to `max_in_flight_per_worker` queued at each worker actor.
//
// Every closure carries a step id that stays the same when it runs again; a worker runs its
// step under ScopedStepId, so each update the step sends to a ps shard carries that id and the
// shard applies it once (TF promises at-least-once; troupe makes the shards' side exactly-once).
// A worker actor that goes away (killed, crashed) is marked dead: the closures it had not
// answered — queued in its mailbox or running — go back to the front of the queue and run on a
// live worker (R-V2-FT-WORKER). Any other failure of a step is the step's error: its
// RemoteValue holds it, and the next schedule / join / done raises it after cancelling what is
// still queued (R-V2-ERR-1, -2); the coordinator is usable afterwards (R-V2-ERR-4).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "core/tensor.hpp"

namespace troupe {

class StepHost;

namespace cluster_detail {
struct State;
struct Closure;
}  // namespace cluster_detail

/// A dataset created on each worker by the same function (TF's per-worker dataset): a handle
/// that steps pass to StepContext::next to draw from their own worker's iterator.
class PerWorkerDataset {
 public:
  int64_t id() const { return id_; }

 private:
  friend class ClusterCoordinator;
  friend class StepHost;
  explicit PerWorkerDataset(int64_t id) : id_(id) {}
  int64_t id_;
};

/// Where a step's per-worker datasets live: the coordinator's in-process workers, or a worker
/// process's step host (coordinator/ps/step_host.hpp).
class StepDatasets {
 public:
  virtual ~StepDatasets() = default;
  /// The next element of worker `worker`'s iterator over dataset `dataset`.
  virtual std::vector<Tensor> next(int worker, int64_t dataset) = 0;
};

/// What a step sees of the worker running it.
class StepContext {
 public:
  StepContext(StepDatasets* datasets, int worker, uint64_t step_id, int attempt,
              caf::actor service = {})
      : datasets_(datasets),
        worker_(worker),
        step_id_(step_id),
        attempt_(attempt),
        service_(std::move(service)) {}
  int worker() const { return worker_; }
  uint64_t step_id() const { return step_id_; }
  /// 1 on the first run, 2 after one rescheduling, ...
  int attempt() const { return attempt_; }
  /// The next element of this worker's iterator over `dataset` (created on first use by the
  /// dataset function with this worker's index). The iterator's end is the dataset function's
  /// out_of_range.
  std::vector<Tensor> next(const PerWorkerDataset& dataset);
  /// The same by PerWorkerDataset::id(), for a dataset passed to the step as an argument.
  std::vector<Tensor> next(int64_t dataset_id);
  /// The coordinator's service for its steps (ClusterCoordinator::set_service), or none.
  const caf::actor& service() const { return service_; }

 private:
  StepDatasets* datasets_;
  int worker_;
  uint64_t step_id_;
  int attempt_;
  caf::actor service_;
};

/// A step: its worker's context and the scheduled arguments -> outputs.
using RemoteStepFn = std::function<std::vector<Tensor>(StepContext&, const std::vector<Tensor>&)>;
/// An iterator: each call returns the next element; out_of_range at the end.
using ElementFn = std::function<std::vector<Tensor>()>;
/// Makes worker `worker`'s iterator.
using PerWorkerDatasetFn = std::function<ElementFn(int worker)>;

/// A resumed run's dataset: draws and drops the `position` batches the checkpointed run drew, so
/// `next`'s following element is the one that run would have drawn next. A dataset that ends
/// first fails naming the dataset, the worker and how far it got (out_of_range).
void skip_drawn_batches(const ElementFn& next, int64_t dataset, int worker, int64_t position);

/// The result of a scheduled closure (TF's RemoteValue).
class RemoteValue {
 public:
  /// True once the closure finished (with outputs or an error, cancellation included).
  bool ready() const;
  /// Blocks until ready; the outputs, or throws the closure's error (Code::cancelled when it
  /// was cancelled; unavailable when every worker is gone before it could run).
  std::vector<Tensor> fetch() const;
  uint64_t step_id() const;
  /// The worker that produced the outputs (-1 before).
  int worker() const;
  /// How many times the closure was started on a worker.
  int attempts() const;

 private:
  friend class ClusterCoordinator;
  RemoteValue(std::shared_ptr<cluster_detail::State> state,
              std::shared_ptr<cluster_detail::Closure> closure)
      : state_(std::move(state)), closure_(std::move(closure)) {}
  std::shared_ptr<cluster_detail::State> state_;
  std::shared_ptr<cluster_detail::Closure> closure_;
};

/// Options of a ClusterCoordinator.
struct ClusterCoordinatorOptions {
  /// In-process workers to spawn (with remote workers: their count).
  int num_workers = 1;
  /// Closures sent to one worker before it answers (queued in its mailbox); at least 1.
  int max_in_flight_per_worker = 2;
  /// Step id of the first scheduled closure; the next ones count up (0 is "no step id").
  uint64_t first_step_id = 1;
};

class ClusterCoordinator {
 public:
  /// Spawns `num_workers` worker actors (each on its own thread) and a dispatcher. Throws
  /// invalid_argument naming a field below 1.
  ClusterCoordinator(caf::actor_system& system, ClusterCoordinatorOptions options);
  /// Workers in other processes (or this one): step host actors (coordinator/ps/step_host.hpp)
  /// that run a closure by step name, in worker order (options.num_workers is their count).
  /// The same dispatch, RemoteValues and rescheduling serve them: a worker whose actor goes
  /// away (its process killed: CAF's down message) has its queued and running closures
  /// rescheduled on the live ones. Throws invalid_argument for no worker or an invalid handle.
  ClusterCoordinator(caf::actor_system& system, std::vector<caf::actor> remote_workers,
                     ClusterCoordinatorOptions options = {});
  /// Cancels queued closures, waits for the running ones, stops the actors.
  ~ClusterCoordinator();
  ClusterCoordinator(const ClusterCoordinator&) = delete;
  ClusterCoordinator& operator=(const ClusterCoordinator&) = delete;

  /// Registers `fn` as step `name` (invalid_argument when the name is taken or empty).
  void register_step(const std::string& name, RemoteStepFn fn);
  /// Queues step `name` with `args`; never waits for it to run. Throws invalid_argument naming
  /// an unknown step (and the known ones), or the pending error of an earlier closure.
  RemoteValue schedule(const std::string& name, std::vector<Tensor> args = {});
  /// Blocks until every scheduled closure finished; raises the first error of one (after
  /// cancelling what is queued), or unavailable when closures remain and no worker is alive.
  void join();
  /// True when nothing is queued or running; raises a pending error like join.
  bool done();
  /// fetch() of each value, in order.
  static std::vector<std::vector<Tensor>> fetch(const std::vector<RemoteValue>& values);
  /// A dataset made on each worker by `fn(worker_index)` when a step first draws from it.
  PerWorkerDataset create_per_worker_dataset(PerWorkerDatasetFn fn);
  /// Batches each worker's iterator over `dataset` has drawn, in worker order, its input
  /// position included: in-process workers count their draws; a remote worker's count is the
  /// one its last answered closure reported (a worker that died keeps the count of its last
  /// answer: the batches of its unanswered closures were drawn again by the worker that reran
  /// them). After join() every count is of steps that finished.
  std::vector<int64_t> batches_drawn(const PerWorkerDataset& dataset) const;
  /// A resumed run (before any step draws from `dataset`): worker w's iterator skips
  /// `batches[w]` elements when it is made, and batches_drawn starts there. A remote worker is
  /// told and answers before this returns. invalid_argument for another number of counts than
  /// workers; failed_precondition (naming the worker) once a worker has drawn from the dataset
  /// or been given its position;
  /// unavailable naming a remote worker that cannot be told.
  void set_input_positions(const PerWorkerDataset& dataset, const std::vector<int64_t>& batches);

  int num_workers() const;
  /// Workers not known to be gone.
  int live_workers() const;
  /// Worker `i`'s actor (what fails when a worker fails).
  caf::actor worker(int i) const;
  /// Closures put back on the queue because their worker went away.
  int64_t rescheduled() const;
  /// An actor of the coordinator's side that steps talk to (e.g. the SyncReplicas accumulator
  /// of sync training): every closure carries it to its worker (StepContext::service()).
  void set_service(caf::actor service);
  /// Called with a worker's index and the number of closures rescheduled when that worker is
  /// lost (from the dispatcher, under its lock: it must not block or call the coordinator).
  void on_worker_lost(std::function<void(int worker, int64_t closures)> fn);

 private:
  caf::actor_system* system_;
  std::shared_ptr<cluster_detail::State> state_;
  caf::actor dispatcher_;
};

}  // namespace troupe
