#pragma once
// The worker role of `troupe server` for a parameter_server experiment (TF2's worker tasks and
// coordinator): every worker task w publishes a step host (experiment/run/ps_worker_host.hpp)
// behind the gatekeeper at its own address from the cluster, attached to the variables on the
// ps tasks; worker task 0 is also the coordinator (TF's chief): it creates the variables on the
// ps tasks, connects to the other workers' step hosts and trains the experiment through a
// ClusterCoordinator over all of them, its own included, writing progress, metrics.csv,
// TensorBoard events and checkpoints as `troupe run` does. When it finishes it tells the other
// workers the job is over (each exits 0). A worker that dies has its closures rescheduled on the
// live ones; the coordinator dying ends the run.

#include <string>

#include "cli/run_training.hpp"
#include "core/tf_config.hpp"
#include "messages/proto/experiment.pb.h"

namespace troupe::cli {

struct PsWorkerTaskOptions {
  std::string secret;             ///< every connection proves it to the gatekeeper
  std::string tls_dir, tls_node;  ///< both empty: plain connections (--no-tls)
};

/// Checks that the cluster of `config` fits `experiment`'s strategy section: a "ps" job of
/// strategy.num_ps tasks, a "worker" job of strategy.workers tasks, no chief. Throws
/// invalid_argument naming both numbers.
void check_ps_cluster(const proto::Experiment& experiment, const ClusterSpec& cluster);

/// Serves config.task (type "worker") of a parameter_server run of `run.file`. Returns the exit
/// code: worker 0 that of its training (0, or 130 / 143 after an interrupt); the others 0 when
/// the coordinator says the job is over, 128 + the signal when stopped by one.
int serve_ps_worker_task(const TfConfig& config, const PsWorkerTaskOptions& options,
                         const RunCommandOptions& run, const proto::Experiment& experiment);

}  // namespace troupe::cli
