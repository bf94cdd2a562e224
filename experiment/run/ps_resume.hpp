#pragma once
// Checkpoints of parameter_server runs (issue 12 item 8): what `troupe run` writes for them and
// how `--resume` reads it back. A checkpoint holds every variable and slot as its whole tensor
// (pulled from its parts), so it restores into any num_ps and partitioning; the per-worker
// input positions (batches each worker drew) and the optimizer's update count come with it.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace troupe {

class PsTrainer;

/// The batches each worker has drawn, as a checkpoint blob ("12,11") and back. parse throws
/// invalid_argument naming the checkpoint when the blob is malformed or has another number of
/// workers than `workers` (a worker's data shard depends on the worker count).
std::string format_worker_batches(const std::vector<int64_t>& drawn);
std::vector<int64_t> parse_worker_batches(const std::string& blob, size_t workers,
                                          const std::string& checkpoint);

/// Where a sync run's SyncReplicas accumulator stood when its checkpoint was taken: the global
/// step, and the gradients of that step accepted but not yet applied. The runner checkpoints
/// after joining every closure, so no token is held by a worker; with no gradient pending
/// (and no backup workers, whose stale tokens linger) the token queue holds exactly the tokens
/// of the global step, and the step alone restores it (SyncReplicas::restore).
struct PsSyncState {
  int64_t global_step = 0;
  int64_t pending = 0;
};

/// The sync state as a checkpoint blob ("75,0") and back; parse throws invalid_argument naming
/// the checkpoint when the blob is malformed.
std::string format_sync_state(const PsSyncState& state);
PsSyncState parse_sync_state(const std::string& blob, const std::string& checkpoint);

/// Every variable and slot of `trainer`, by name, plus "optimizer/iterations".
std::map<std::string, Tensor> ps_checkpoint_tensors(PsTrainer& trainer);

/// Writes the checkpoint's tensors into the trainer's variables and slots (on the shards,
/// split over whatever parts they have now) and its update count. Everything is checked first:
/// a missing tensor or another shape fails naming it and the checkpoint, and nothing changes.
void restore_ps_checkpoint(PsTrainer& trainer, const std::map<std::string, Tensor>& tensors,
                           const std::string& checkpoint);

/// The last step metrics.csv in `run_dir` records (0 when there is none): how far the run that
/// wrote the checkpoint got.
int64_t last_logged_step(const std::string& run_dir);

}  // namespace troupe
