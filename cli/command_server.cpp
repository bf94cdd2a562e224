// `troupe server [FILE]`: one task of a cluster, as TF runs one server per task. The cluster and
// this task come from TF_CONFIG or from `--cluster FILE --job J --task I`. A chief or worker task
// joins the collective group of the cluster's workers (listening on its own address from the
// cluster, every connection proving the shared secret, and mutual TLS with `--tls-dir`), then
// trains FILE with multi_worker_mirrored as that worker: the same run options, progress and exit
// codes as `troupe run`. A ps task serves a ps_shard instead (cli/serve_ps_task.hpp) and takes
// no experiment; an evaluator task evaluates the chief's checkpoints (cli/evaluator_task.hpp). A
// worker task of a parameter_server experiment runs steps for worker 0, the coordinator
// (cli/serve_ps_worker.hpp).
// `troupe launch` starts one per task.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "cli/evaluator_task.hpp"
#include "cli/run_training.hpp"
#include "cli/serve_ps_task.hpp"
#include "cli/serve_ps_worker.hpp"
#include "coordinator/cluster/collective_group.hpp"
#include "coordinator/runtime.hpp"
#include "core/collective_members.hpp"
#include "core/json.hpp"
#include "core/tf_config.hpp"
#include "experiment/experiment_file.hpp"
#include "net/shared_secret.hpp"
#include "net/shm_rendezvous.hpp"

namespace po = boost::program_options;

namespace troupe::cli {
namespace {

// `--cluster FILE`: a cluster object ({"worker": [...], ...}) or a whole TF_CONFIG, whose
// "cluster" is used (its task, if any, is replaced by --job/--task).
ClusterSpec read_cluster_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw po::error("--cluster: cannot read '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  try {
    Json value = Json::parse(text.str());
    const Json* cluster = value.is_object() ? value.find("cluster") : nullptr;
    ClusterSpec spec = ClusterSpec::from_json(cluster ? *cluster : value, "cluster");
    validate_cluster(spec);
    return spec;
  } catch (const Error& e) {
    throw invalid_argument(path + ": " + e.what());
  }
}

}  // namespace

int run_server_command(const std::vector<std::string>& args) {
  po::options_description options("troupe server options");
  RunCommandOptions run;
  add_run_options(options, run);
  std::string cluster_file, job, secret_file, tls_dir, node;
  int task = -1;
  bool no_tls = false;
  int64_t assemble_ms = 60000;
  options.add_options()("cluster", po::value(&cluster_file),
                        "cluster file (default: TF_CONFIG's cluster and task)")(
      "job", po::value(&job), "this task's job with --cluster: chief, worker, ps or evaluator")(
      "task", po::value(&task), "this task's index in its job with --cluster")(
      "secret-file", po::value(&secret_file), "shared secret file (default: $TROUPE_SECRET)")(
      "tls-dir", po::value(&tls_dir), "mutual TLS with the certificates of `troupe cluster-certs`")(
      "node", po::value(&node), "this node's name in --tls-dir (uses NAME.pem and NAME.key)")(
      "no-tls", po::bool_switch(&no_tls),
      "accept plain connections that prove only the shared secret (not for untrusted networks)")(
      "assemble-timeout-ms", po::value(&assemble_ms)->default_value(60000),
      "every worker must have joined by then");
  po::variables_map vm;
  if (!parse_command_line("troupe server [FILE] [--cluster FILE --job J --task I] "
                          "[--secret-file F] (--tls-dir DIR --node NAME | --no-tls) [run options]",
                          args, options, vm, {"file"}))
    return 0;
  check_run_options(run);
  if (tls_dir.empty() != node.empty())
    throw po::error("--tls-dir and --node go together (got only " +
                    std::string(tls_dir.empty() ? "--node" : "--tls-dir") + ")");
  if (assemble_ms < 1) throw po::error("--assemble-timeout-ms must be >= 1");
  // Plain CAF connections can be attacked before the secret is proven (a forged header makes the
  // node allocate; an actor id can be messaged directly): TLS unless asked otherwise.
  if (tls_dir.empty() && !no_tls)
    throw po::error(
        "troupe server needs --tls-dir DIR --node NAME (mutual TLS; `troupe cluster-certs` makes "
        "the files), or --no-tls for plain connections that prove only the shared secret");
  if (!tls_dir.empty() && no_tls) throw po::error("--no-tls contradicts --tls-dir");

  TfConfig config;
  if (!cluster_file.empty()) {
    if (job.empty() || task < 0) throw po::error("--cluster needs --job and --task (>= 0)");
    config.cluster = read_cluster_file(cluster_file);
    config.task = TaskSpec{job, task};
    validate_task(config.cluster, config.task);
  } else {
    if (!job.empty() || task >= 0) throw po::error("--job and --task go with --cluster");
    auto from_env = TfConfig::from_env();
    if (!from_env)
      throw po::error(
          "no cluster: set TF_CONFIG or give --cluster FILE --job J --task I (troupe launch "
          "does this for a local cluster)");
    config = *from_env;
  }
  const std::string me = config.task.name();
  // The evaluator joins no group: it reads the checkpoints the chief writes (cli/evaluator_task).
  if (config.task.type == "evaluator") return run_evaluator_task("troupe server " + me, run, false);
  if (config.task.type == "ps") {
    // A ps task holds variables for the workers; it trains nothing, so the options of a
    // training run would be ignored: refuse them instead.
    std::string training;
    for (const char* option : {"file", "resume", "overwrite", "timeline", "dir", "steps"})
      if (vm.count(option) && !vm[option].defaulted())
        training +=
            (training.empty() ? "" : ", ") +
            (std::string(option) == "file" ? std::string("FILE") : "--" + std::string(option));
    if (vm.count("assemble-timeout-ms") && !vm["assemble-timeout-ms"].defaulted())
      training += (training.empty() ? "" : ", ") + std::string("--assemble-timeout-ms");
    if (!training.empty())
      throw po::error("troupe server " + me + ": a ps task serves a shard and takes no " +
                      training + " (those are for chief and worker tasks)");
    PsTaskOptions ps;
    ps.secret = load_shared_secret(secret_file);
    ps.tls_dir = tls_dir;
    ps.tls_node = node;
    return serve_ps_task(config, ps);
  }
  // A parameter_server experiment: the workers run steps for worker 0, which coordinates
  // (cli/serve_ps_worker.hpp); they join no collective group.
  if (!run.file.empty()) {
    proto::Experiment experiment = experiment::load_experiment(run.file);
    if (experiment.strategy().kind() == "parameter_server") {
      PsWorkerTaskOptions ps;
      ps.secret = load_shared_secret(secret_file);
      ps.tls_dir = tls_dir;
      ps.tls_node = node;
      return serve_ps_worker_task(config, ps, run, experiment);
    }
  }
  const auto members = collective_members(config.cluster);
  std::vector<HostPort> addresses;
  std::vector<std::string> names;
  int rank = -1;
  for (auto& m : members) {
    if (m.name == me) rank = int(names.size());
    addresses.push_back(m.address);
    names.push_back(m.name);
  }
  if (rank < 0) throw invalid_argument("troupe server: " + me + " is not a worker of the cluster");

  CollectiveGroupOptions group_options;
  group_options.secret = load_shared_secret(secret_file);
  group_options.tls = !tls_dir.empty();
  group_options.assemble_timeout = std::chrono::milliseconds(assemble_ms);
  ActorSystemOptions system_options;
  if (group_options.tls) set_tls_from_dir(system_options, tls_dir, node);
  Runtime runtime(system_options);
  std::fprintf(stderr, "troupe server %s: joining %zu worker(s) from %s:%d%s\n", me.c_str(),
               names.size(), addresses[size_t(rank)].host.c_str(), addresses[size_t(rank)].port,
               group_options.tls ? " with mutual TLS" : "");
  CollectiveGroup group(runtime.system(), addresses, names, rank, group_options);
  if (auto one_host = group.one_host_path(); one_host.rendezvous)
    std::fprintf(stderr,
                 "troupe server %s: all-reduces of at most %zu bytes meet in shared memory "
                 "(every worker is on this host)\n",
                 me.c_str(), one_host.small_bytes);
  auto workers = peer_worker_collective(runtime.system(), group.peer(), rank, names,
                                        CommunicationOptions{}, group.one_host_path());
  return train_from_command_line("troupe server " + me, run, runtime, workers);
}

}  // namespace troupe::cli
