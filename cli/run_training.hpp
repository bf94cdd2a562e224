#pragma once
// What `troupe run` and `troupe server` share: the run options of the command line, and the
// training of one experiment with its progress, summary, interrupt handling and exit code. A
// server passes the cluster it is a worker of; `run` trains with every replica in this process.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <boost/program_options.hpp>

#include "coordinator/collectives/worker_collective.hpp"

namespace troupe {
class Runtime;
struct PsRemoteCluster;
}  // namespace troupe

namespace troupe::cli {

/// After the first signal, how long a run waiting for input or setting up gets to reach a stop
/// by itself before it is abandoned (cli/run_interrupts.hpp).
constexpr std::chrono::milliseconds kDefaultStopGrace{500};

struct RunCommandOptions {
  std::string file;  ///< experiment YAML; empty: the embedded demo
  std::string timeline, dir;
  bool resume = false, overwrite = false;
  int64_t steps = 0;
  /// `troupe run --stop-grace-ms`; a server and the launcher keep the default.
  std::chrono::milliseconds stop_grace = kDefaultStopGrace;
};

/// --resume, --overwrite, --timeline, --dir, --steps (and the positional FILE as "file").
void add_run_options(boost::program_options::options_description& options, RunCommandOptions& o);

/// Checks the parsed options (usage errors as po::error: exit 2).
void check_run_options(const RunCommandOptions& o);

/// Trains the experiment of `o` on `runtime`, printing as `command` ("troupe run", "troupe
/// server /job:worker/task:1"). Returns the exit code: 0, or 130 / 143 after an interrupt.
/// `ps_cluster`: a parameter_server run this process coordinates across processes.
int train_from_command_line(const std::string& command, const RunCommandOptions& o,
                            Runtime& runtime, std::shared_ptr<WorkerCollective> workers,
                            std::shared_ptr<const PsRemoteCluster> ps_cluster = nullptr);

}  // namespace troupe::cli
