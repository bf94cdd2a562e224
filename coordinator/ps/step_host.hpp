#pragma once
// The worker side of a ClusterCoordinator across processes (TF2's worker task): a worker
// process registers the same steps by name as the coordinator (from the same experiment file)
// and creates its own per-worker datasets; its step host actor runs the closure a coordinator
// sends (ps_run_step_msg: step name, step id, attempt, args) on one thread of its own, under
// ScopedStepId so every update the step sends to a ps shard carries the closure's id and is
// applied once however often the closure is retried, and answers the outputs
// (ps_step_done_msg). A step that throws answers its error, naming the step and this worker.
// Each answer carries how many batches the host's datasets have drawn, so the coordinator can
// checkpoint every worker's input position; a resumed run tells the host where its datasets
// start (input_position_atom) before any step draws from them. The host quits on stop_atom (the
// job is over); the coordinator sees it go (a down message) when its process dies.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "coordinator/ps/cluster_coordinator.hpp"

namespace troupe {

/// Steps and per-worker datasets of worker `worker`, run by name.
class StepHost : public StepDatasets {
 public:
  explicit StepHost(int worker);

  int worker() const { return worker_; }
  /// Registers `fn` as step `name` (invalid_argument when the name is taken or empty).
  void register_step(const std::string& name, RemoteStepFn fn);
  /// A dataset made by `fn(worker())` when a step first draws from it. Datasets are numbered
  /// in creation order, as the coordinator numbers its own: create them in the same order.
  PerWorkerDataset create_per_worker_dataset(PerWorkerDatasetFn fn);
  /// Runs step `name` under `step_id` (invalid_argument naming an unknown step).
  /// `service`: the coordinator's (StepContext::service()).
  std::vector<Tensor> run(const std::string& name, uint64_t step_id, int attempt,
                          const std::vector<Tensor>& args, caf::actor service = {});
  std::vector<Tensor> next(int worker, int64_t dataset) override;

  /// A resumed run: dataset `dataset`'s iterator skips `batches` elements when it is made (its
  /// first draw), and the counts below start there. invalid_argument for a dataset not created
  /// or a negative count; failed_precondition once a step has drawn from the dataset.
  void set_input_position(int64_t dataset, int64_t batches);
  /// Batches each dataset (by id) has drawn, its input position included.
  std::vector<int64_t> batches_drawn() const;

 private:
  int worker_;
  std::mutex mutex_;
  std::map<std::string, RemoteStepFn> steps_;
  std::vector<PerWorkerDatasetFn> datasets_;
  // Touched only by the host's thread (the step host actor runs steps and positions in turn).
  std::map<int64_t, ElementFn> iterators_;
  std::map<int64_t, int64_t> drawn_;  // dataset -> batches drawn, from its input position
};

/// The actor that runs `host`'s steps for a coordinator (detached: a step blocks on the ps
/// shards). Publish it behind a gatekeeper for a coordinator in another process.
caf::actor spawn_step_host(caf::actor_system& system, std::shared_ptr<StepHost> host);

}  // namespace troupe
