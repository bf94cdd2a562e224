#pragma once
// The `troupe` subcommands. Adding one = cli/command_<name>.cpp defining
// `int run_<name>_command(const std::vector<std::string>& args)` + one line in kCommands.
// Each returns the process exit code; usage errors are thrown as
// boost::program_options::error (main turns them into exit code 2).

#include <string>
#include <vector>

namespace troupe::cli {

/// What a ps task's `troupe server` prints once it accepts connections ("troupe server
/// /job:ps/task:0: serving ps shard 'ps:0' on ..."): `troupe launch` starts the workers after it.
inline constexpr const char* kPsServingLine = ": serving ps shard '";

/// One subcommand: its name, a one-line summary, its entry point (args exclude the name).
struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

int run_run_command(const std::vector<std::string>& args);
int run_serve_command(const std::vector<std::string>& args);
int run_echo_command(const std::vector<std::string>& args);
int run_bench_command(const std::vector<std::string>& args);
int run_collective_peer_command(const std::vector<std::string>& args);
int run_plan_command(const std::vector<std::string>& args);
int run_inspect_command(const std::vector<std::string>& args);
int run_data_command(const std::vector<std::string>& args);
int run_cluster_certs_command(const std::vector<std::string>& args);
int run_server_command(const std::vector<std::string>& args);
int run_launch_command(const std::vector<std::string>& args);
int run_compare_command(const std::vector<std::string>& args);
int run_evaluate_command(const std::vector<std::string>& args);

/// Every subcommand, in help order.
inline constexpr Command kCommands[] = {
    {"run", "train an experiment file (default: the embedded MLP demo) with checkpoints and logs",
     run_run_command},
    {"serve", "publish an authenticated tensor service on 127.0.0.1 and print its PORT",
     run_serve_command},
    {"echo", "send a tensor to a `troupe serve` node and check every byte that comes back",
     run_echo_command},
    {"bench", "run a benchmark (`troupe bench --help` lists them)", run_bench_command},
    {"collective-peer", "one rank of a multi-process all-reduce over the middleman (tests, bench)",
     run_collective_peer_command},
    {"plan", "validate an experiment file and print its replicas, batches and variables",
     run_plan_command},
    {"inspect", "verify a checkpoint and list its tensors (--values dumps them)",
     run_inspect_command},
    {"data", "write a synthetic data set as TFRecord shards (`troupe data synthesize`)",
     run_data_command},
    {"cluster-certs", "write a cluster CA and per-node TLS certificates and keys into a directory",
     run_cluster_certs_command},
    {"server", "one task of a cluster (TF_CONFIG or --cluster/--job/--task): trains as a worker",
     run_server_command},
    {"launch", "start a local cluster of N `troupe server` processes and train an experiment",
     run_launch_command},
    {"compare", "run the variants of a comparison file one after another and write a report",
     run_compare_command},
    {"evaluate", "evaluate a run's checkpoints on the experiment's eval data (side-car evaluator)",
     run_evaluate_command},
};

}  // namespace troupe::cli
