#include "cli/serve_ps_worker.hpp"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>

#include <caf/all.hpp>

#include "coordinator/ps/connect_ps_shards.hpp"
#include "coordinator/runtime.hpp"
#include "core/host_port.hpp"
#include "core/status.hpp"
#include "experiment/run/ps_experiment_runner.hpp"
#include "experiment/run/ps_worker_host.hpp"
#include "messages/atoms.hpp"
#include "messages/system_config.hpp"
#include "net/gatekeeper.hpp"
#include "net/tls_transport.hpp"

namespace troupe::cli {
namespace {

std::atomic<int> g_worker_stop_signal{0};

extern "C" void on_ps_worker_stop_signal(int sig) { g_worker_stop_signal.store(sig); }

// Waits until the coordinator stops the step host (the job is over) or a signal arrives;
// returns the signal, or 0.
int wait_until_stopped(caf::actor_system& sys, const caf::actor& host) {
  g_worker_stop_signal.store(0);
  std::signal(SIGINT, on_ps_worker_stop_signal);
  std::signal(SIGTERM, on_ps_worker_stop_signal);
  caf::scoped_actor self{sys};
  self->monitor(host);
  bool down = false;
  // A signal handler cannot message an actor, so the wait wakes up to look at the flag.
  while (!down && g_worker_stop_signal.load() == 0)
    self->receive([&](caf::down_msg&) { down = true; },
                  caf::after(std::chrono::milliseconds(100)) >> [] {});
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  return down ? 0 : g_worker_stop_signal.load();
}

// Stops a published service when the task leaves, however it leaves.
struct Published {
  caf::actor gate;
  ~Published() {
    if (gate) caf::anon_send_exit(gate, caf::exit_reason::user_shutdown);
  }
};

}  // namespace

void check_ps_cluster(const proto::Experiment& e, const ClusterSpec& cluster) {
  const auto& spec = e.strategy().parameter_server();
  const int ps = cluster.has_job("ps") ? cluster.num_tasks("ps") : 0;
  const int workers = cluster.has_job("worker") ? cluster.num_tasks("worker") : 0;
  if (spec.num_ps() != ps || spec.workers() != workers)
    throw invalid_argument("strategy.num_ps " + std::to_string(spec.num_ps()) +
                           " and strategy.workers " + std::to_string(spec.workers()) +
                           " do not match the cluster's " + std::to_string(ps) +
                           " ps task(s) and " + std::to_string(workers) + " worker task(s)");
  if (cluster.has_job("chief"))
    throw invalid_argument(
        "a parameter_server run across processes is coordinated by worker task 0; a cluster "
        "with a chief job is not supported");
}

int serve_ps_worker_task(const TfConfig& config, const PsWorkerTaskOptions& options,
                         const RunCommandOptions& run, const proto::Experiment& experiment) {
  const std::string me = config.task.name();
  if (config.task.type != "worker")
    throw invalid_argument("troupe server " + me +
                           ": a parameter_server run has worker and ps tasks, not " +
                           config.task.type);
  check_ps_cluster(experiment, config.cluster);
  const int index = config.task.index;
  const bool tls = !options.tls_dir.empty();
  ActorSystemOptions system_options;
  if (tls) set_tls_from_dir(system_options, options.tls_dir, options.tls_node);
  Runtime runtime(system_options);
  caf::actor_system& sys = runtime.system();

  const PsConnectOptions connect{options.secret, tls, std::chrono::seconds(60)};
  PsShards shards = connect_ps_shards(sys, config.cluster, connect);
  // The steps' gathers and applies of enough bytes take each ps task's bulk connection.
  size_t bulk_tasks = 0;
  PsWorkerHost host(sys, experiment, index, shards.handles, [&](PsClient& client) {
    bulk_tasks = use_ps_bulk(sys, shards, connect, client);
  });
  // At the end, whichever way this worker leaves: what went beside CAF.
  struct ReportBulk {
    const std::string& me;
    const PsWorkerHost& host;
    size_t tasks;
    ~ReportBulk() {
      if (tasks == 0) return;
      std::printf(
          "troupe server %s: %llu bytes sent and %llu received on the bulk connections "
          "of %zu ps task(s)\n",
          me.c_str(), static_cast<unsigned long long>(host.ps_client().bulk_bytes_sent()),
          static_cast<unsigned long long>(host.ps_client().bulk_bytes_received()), tasks);
      std::fflush(stdout);
    }
  } report_bulk{me, host, bulk_tasks};
  const HostPort address =
      HostPort::parse(config.cluster.task_address("worker", index), "cluster.worker");
  Published published{spawn_gatekeeper(sys, options.secret, host.actor())};
  auto port =
      publish_actor(sys, published.gate, uint16_t(address.port), address.socket_host(), tls);
  if (!port)
    throw unavailable("troupe server " + me + ": cannot listen on " + address.host + ":" +
                      std::to_string(address.port) + ": " + sys.render(port.error()));
  std::printf("troupe server %s: serving parameter_server steps on %s:%d%s\n", me.c_str(),
              address.host.c_str(), int(*port), tls ? " with mutual TLS" : " (no TLS)");
  std::fflush(stdout);

  if (index != 0) {
    const int sig = wait_until_stopped(sys, host.actor());
    std::printf("troupe server %s: %s\n", me.c_str(),
                sig == 0 ? "the job is over (the coordinator stopped this worker)"
                         : (std::string("stopped by ") + ::strsignal(sig)).c_str());
    std::fflush(stdout);
    return sig == 0 ? 0 : 128 + sig;
  }

  // Worker 0 coordinates: every worker's step host, its own first.
  std::vector<int> others;
  for (int w : config.cluster.task_indices("worker"))
    if (w != index) others.push_back(w);
  auto cluster = std::make_shared<PsRemoteCluster>();
  cluster->shards = shards.handles;
  cluster->workers.push_back(host.actor());
  for (auto& worker : connect_cluster_tasks(sys, config.cluster, "worker", others, connect))
    cluster->workers.push_back(worker);
  std::fprintf(stderr,
               "troupe server %s: coordinating %zu worker(s) over %zu ps task(s) (worker task 0 "
               "is the coordinator)\n",
               me.c_str(), cluster->workers.size(), cluster->shards.size());
  struct StopWorkers {
    std::shared_ptr<PsRemoteCluster> cluster;
    ~StopWorkers() {
      // The job is over (or failed): the other workers' processes exit.
      for (size_t w = 1; w < cluster->workers.size(); ++w)
        caf::anon_send(cluster->workers[w], stop_atom::value);
    }
  } stop_workers{cluster};
  return train_from_command_line("troupe server " + me, run, runtime, nullptr, cluster);
}

}  // namespace troupe::cli
