#pragma once
// The ps role of `troupe server`: one ps_shard actor named "ps:<k>" for /job:ps/task:<k>,
// published behind the shared-secret gatekeeper (and mutual TLS) at the task's address from the
// cluster, served until the job is over (a client sends the shard stop_atom:
// coordinator/ps/connect_ps_shards.hpp's stop_ps_shards) or SIGTERM / SIGINT arrives.

#include <string>

#include "core/tf_config.hpp"

namespace troupe::cli {

struct PsTaskOptions {
  std::string secret;             ///< every connection proves it to the gatekeeper
  std::string tls_dir, tls_node;  ///< both empty: plain connections (--no-tls)
};

/// Serves config.task (type "ps") until it is told to stop. Prints
/// "troupe server /job:ps/task:<k>: serving ps shard 'ps:<k>' on <host>:<port> ..." on stdout
/// once it listens. Returns 0 when the job is over or a SIGTERM / SIGINT stopped it (a ps task
/// holds nothing to save: being stopped is how it ends). Throws unavailable naming the address
/// it cannot listen on.
int serve_ps_task(const TfConfig& config, const PsTaskOptions& options);

}  // namespace troupe::cli
