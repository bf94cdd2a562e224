// `troupe launch -n N FILE`: a local cluster of N `troupe server` processes training FILE (strategy
// multi_worker_mirrored), as torchrun or horovodrun start theirs. The launcher picks ports on
// 127.0.0.1 (the OS chooses them) and holds them for the whole launch, so that no other process
// takes one before its task listens on it. It makes fresh credentials (a random shared secret and,
// unless --no-tls, a cluster CA with a certificate per worker) in a private temporary directory,
// and gives each process its TF_CONFIG. Every line a worker prints comes out prefixed with its
// task. When a worker dies or fails, the launcher names it, gives the others a moment to report
// their own errors, stops them and exits 1. Ctrl-C / SIGTERM reach every worker once (each stops at
// the same step and writes its checkpoint) and the launcher exits 130 / 143; a second signal kills
// them at once. With `--ps P` it first starts P `troupe server` ps tasks (listed in every TF_CONFIG
// as the "ps" job, prefixed [ps:k]) and starts the workers once each says it serves (or 60 s
// passed); a ps that dies is named like a worker, and when the workers
// have finished the ps tasks are stopped with SIGTERM (they exit 0). With --evaluator one more
// task, /job:evaluator/task:0, evaluates every checkpoint (cli/evaluator_task.hpp); it joins no
// collective group and is waited for as a worker is. A parameter_server experiment (whose num_ps /
// workers must equal --ps / -n) trains with worker 0 as its coordinator (cli/serve_ps_worker.hpp);
// a worker other than 0 that dies is named and the launch goes on, its steps rescheduled on the
// live workers. With `replication: 2` a ps task that dies is named too and the launch goes on: the
// backup of its variables on the next ps task serves them (the clients fail over); a second loss of
// the same variables fails the coordinator, which fails the launch.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <thread>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "cli/evaluator_task.hpp"
#include "cli/run_training.hpp"
#include "core/cluster_spec.hpp"
#include "core/tf_config.hpp"
#include "experiment/experiment_file.hpp"
#include "experiment/run/run_directory.hpp"
#include "net/child_process.hpp"
#include "net/cluster_credentials.hpp"
#include "net/loopback_port_reservation.hpp"

namespace po = boost::program_options;

namespace troupe::cli {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<int> g_signal{0};
std::atomic<int> g_signals{0};

extern "C" void on_launch_signal(int sig) {
  int expected = 0;
  g_signal.compare_exchange_strong(expected, sig);
  g_signals.fetch_add(1);
}

std::string describe_exit(int code) {
  if (code > 128 && code < 128 + 65) {
    const int sig = code - 128;
    const char* name = ::sigabbrev_np(sig);
    return "was killed by signal " + std::to_string(sig) +
           (name ? std::string(" (SIG") + name + ")" : "");
  }
  return "exited with code " + std::to_string(code);
}

struct Worker {
  std::string name;      // "/job:worker/task:1"
  std::string prefix;    // "[worker:1] "
  bool ps = false;       // a ps task: serves until the workers are done
  bool serving = false;  // a ps task that said it accepts connections
  int index = 0;         // the task's index in its job
  std::unique_ptr<ChildProcess> process;
  std::optional<int> exit_code;
};

void forward_output(Worker& w) {
  while (auto line = w.process->take_out_line()) {
    if (w.ps && line->find(kPsServingLine) != std::string::npos) w.serving = true;
    std::printf("%s%s\n", w.prefix.c_str(), line->c_str());
  }
  while (auto line = w.process->take_err_line())
    std::fprintf(stderr, "%s%s\n", w.prefix.c_str(), line->c_str());
  std::fflush(stdout);
}

// The workers connect to the ps tasks, and a short job could otherwise end (and stop them)
// before a ps task is up. Waits until every ps task in `group` said it serves, or its output
// closed (it exited: the main loop reports it), or a signal came, or 60 s passed (then the
// workers start anyway and name a ps task they cannot reach).
void wait_until_ps_tasks_serve(std::vector<Worker>& group) {
  const auto until = Clock::now() + std::chrono::seconds(60);
  for (auto& w : group)
    while (w.ps && !w.serving && !w.process->output_closed() && g_signals.load() == 0 &&
           Clock::now() < until) {
      w.process->pump_for(std::chrono::milliseconds(10));
      forward_output(w);
    }
}

std::vector<std::string> server_args(const RunCommandOptions& run,
                                     const ClusterCredentials& credentials,
                                     const std::string& node) {
  std::vector<std::string> args{"server"};
  if (!run.file.empty()) args.push_back(run.file);
  if (run.resume) args.push_back("--resume");
  if (run.overwrite) args.push_back("--overwrite");
  if (!run.timeline.empty()) args.insert(args.end(), {"--timeline", run.timeline});
  if (!run.dir.empty()) args.insert(args.end(), {"--dir", run.dir});
  if (run.steps > 0) args.insert(args.end(), {"--steps", std::to_string(run.steps)});
  auto proof = credential_args(credentials, node);
  args.insert(args.end(), proof.begin(), proof.end());
  return args;
}

// A ps task takes no experiment or run options: only how to prove it belongs to the cluster.
std::vector<std::string> ps_server_args(const ClusterCredentials& credentials,
                                        const std::string& node) {
  std::vector<std::string> args{"server"};
  auto proof = credential_args(credentials, node);
  args.insert(args.end(), proof.begin(), proof.end());
  return args;
}

}  // namespace

int run_launch_command(const std::vector<std::string>& args) {
  po::options_description options("troupe launch options");
  RunCommandOptions run;
  add_run_options(options, run);
  int workers = 0, ps = 0;
  bool evaluator = false, no_tls = false;
  int64_t grace_ms = 2000;
  options.add_options()("workers,n", po::value(&workers)->required(), "worker processes")(
      "ps", po::value(&ps)->default_value(0), "parameter-server processes")(
      "evaluator", po::bool_switch(&evaluator), "a side-car evaluator process")(
      "no-tls", po::bool_switch(&no_tls),
      "plain connections (still proving the shared secret) instead of mutual TLS")(
      "grace-ms", po::value(&grace_ms)->default_value(2000),
      "after a worker fails, how long the others may report their errors before being stopped");
  po::variables_map vm;
  if (!parse_command_line("troupe launch -n N [--ps P] [--evaluator] [--no-tls] FILE "
                          "[--resume | --overwrite] [--dir DIR] [--steps N]",
                          args, options, vm, {"file"}))
    return 0;
  check_run_options(run);
  if (workers < 1 || workers > 256)
    throw po::error("-n must be in [1, 256], got " + std::to_string(workers));
  if (ps < 0 || ps > 256) throw po::error("--ps must be in [0, 256], got " + std::to_string(ps));
  if (grace_ms < 0) throw po::error("--grace-ms must be >= 0");
  // Everything a worker would refuse is refused here, before a process starts.
  proto::Experiment experiment =
      run.file.empty() ? experiment::default_experiment() : experiment::load_experiment(run.file);
  const std::string what = run.file.empty() ? std::string("the embedded demo") : run.file;
  // parameter_server: worker 0 coordinates, every worker runs steps against the ps tasks
  // (cli/serve_ps_worker.hpp); the file's cluster shape must be the one launched.
  const bool ps_run = experiment.strategy().kind() == "parameter_server";
  if (ps_run) {
    const auto& spec = experiment.strategy().parameter_server();
    if (spec.num_ps() != ps || spec.workers() != workers)
      throw po::error(what + ": strategy.num_ps " + std::to_string(spec.num_ps()) +
                      " and strategy.workers " + std::to_string(spec.workers()) +
                      " do not match --ps " + std::to_string(ps) + " and -n " +
                      std::to_string(workers));
  }
  if (!ps_run && experiment.strategy().kind() != "multi_worker_mirrored")
    throw po::error(what + ": strategy.kind is " + experiment.strategy().kind() +
                    ", which runs in one process; troupe launch needs kind multi_worker_mirrored "
                    "or parameter_server");
  const std::string run_dir = run_directory(experiment, run.dir);
  try {
    check_run_directory(run_dir, run.resume, run.overwrite);
  } catch (const Error& e) {
    throw po::error(e.what());
  }
  if (evaluator) {
    if (!experiment.has_eval())
      throw po::error((run.file.empty() ? std::string("the embedded demo") : run.file) +
                      " has no eval section: --evaluator needs eval.data (docs/experiments.md)");
    prepare_evaluator_run_directory(run_dir, run);
  }

  std::vector<std::string> nodes, addresses, ps_nodes, ps_addresses;
  // Every task's port stays held by the launcher until it returns: a task binds its own with
  // SO_REUSEADDR while the launcher holds it, and nothing else on the machine can take it in
  // between (net/loopback_port_reservation.hpp says what was measured). The evaluator listens
  // on none; its address is held so that TF_CONFIG names no port someone else may be using.
  const net::LoopbackPortReservation reserved(workers + ps + (evaluator ? 1 : 0));
  const std::vector<int>& ports = reserved.ports();
  for (int i = 0; i < workers; ++i) {
    nodes.push_back("worker" + std::to_string(i));
    addresses.push_back("127.0.0.1:" + std::to_string(ports[size_t(i)]));
  }
  for (int i = 0; i < ps; ++i) {
    ps_nodes.push_back("ps" + std::to_string(i));
    ps_addresses.push_back("127.0.0.1:" + std::to_string(ports[size_t(workers + i)]));
  }
  // The evaluator is a task of the cluster (TF_CONFIG lists it) but no member of the workers'
  // collective group: it only reads the chief's checkpoints.
  const std::string evaluator_address =
      evaluator ? "127.0.0.1:" + std::to_string(ports[size_t(workers + ps)]) : "";
  std::vector<std::string> all_nodes = nodes;
  all_nodes.insert(all_nodes.end(), ps_nodes.begin(), ps_nodes.end());
  if (evaluator) all_nodes.push_back("evaluator");
  ClusterCredentials credentials = make_cluster_credentials(all_nodes, !no_tls);
  struct RemoveCredentials {
    const ClusterCredentials& c;
    ~RemoveCredentials() { remove_cluster_credentials(c); }
  } remove_credentials{credentials};
  TfConfig config;
  std::map<std::string, std::vector<std::string>> jobs{{"worker", addresses}};
  if (ps > 0) jobs["ps"] = ps_addresses;
  if (evaluator) jobs["evaluator"] = {evaluator_address};
  config.cluster = ClusterSpec::from_lists(jobs);

  std::signal(SIGINT, on_launch_signal);
  std::signal(SIGTERM, on_launch_signal);
  std::fprintf(stderr, "troupe launch: %d worker(s)%s on 127.0.0.1 (%s), credentials in %s\n",
               workers, ps > 0 ? (" and " + std::to_string(ps) + " ps task(s)").c_str() : "",
               no_tls ? "shared secret" : "mutual TLS + shared secret", credentials.dir.c_str());
  if (ps > 0 && !ps_run)
    std::fprintf(stderr,
                 "troupe launch: note: the workers train with %s, which does not use the ps "
                 "tasks; they are reachable through TF_CONFIG's \"ps\" job\n",
                 experiment.strategy().kind().c_str());
  std::vector<Worker> group;
  ChildProcessOptions detach;
  detach.own_process_group = true;  // Ctrl-C reaches the launcher, which forwards it once
  detach.parent_death_signal = SIGKILL;
  // The ps tasks first: the workers connect to them.
  for (int i = 0; i < ps; ++i) {
    config.task = TaskSpec{"ps", i};
    Worker w;
    w.name = config.task.name();
    w.prefix = "[ps:" + std::to_string(i) + "] ";
    w.ps = true;
    w.index = i;
    w.process = std::make_unique<ChildProcess>(
        current_executable(), ps_server_args(credentials, ps_nodes[size_t(i)]),
        std::vector<std::string>{"TF_CONFIG=" + config.to_json()}, detach);
    std::printf("troupe launch: started %s (pid %d)\n", w.name.c_str(), int(w.process->pid()));
    std::fflush(stdout);
    group.push_back(std::move(w));
  }
  wait_until_ps_tasks_serve(group);
  for (int i = 0; i < workers; ++i) {
    config.task = TaskSpec{"worker", i};
    Worker w;
    w.name = config.task.name();
    w.prefix = "[worker:" + std::to_string(i) + "] ";
    w.process = std::make_unique<ChildProcess>(
        current_executable(), server_args(run, credentials, nodes[size_t(i)]),
        std::vector<std::string>{"TF_CONFIG=" + config.to_json()}, detach);
    std::printf("troupe launch: started %s (pid %d)\n", w.name.c_str(), int(w.process->pid()));
    std::fflush(stdout);
    group.push_back(std::move(w));
  }
  if (evaluator) {
    config.task = TaskSpec{"evaluator", 0};
    Worker w;
    w.name = config.task.name();
    w.prefix = "[evaluator] ";
    w.process = std::make_unique<ChildProcess>(
        current_executable(), evaluator_server_args(run, credentials, "evaluator"),
        std::vector<std::string>{"TF_CONFIG=" + config.to_json()}, detach);
    std::printf("troupe launch: started %s (pid %d)\n", w.name.c_str(), int(w.process->pid()));
    std::fflush(stdout);
    group.push_back(std::move(w));  // waited for like a worker: it ends after the last checkpoint
  }

  std::string failure;
  std::optional<Clock::time_point> stop_at, kill_at;
  int forwarded = 0;
  size_t running = group.size();
  size_t workers_running = size_t(workers) + (evaluator ? 1 : 0);  // every task but the ps
  int lost_workers = 0;  // parameter_server: workers that died while the others went on
  int lost_ps = 0;       // parameter_server with replication 2: ps tasks whose backups took over
  std::set<int> lost_ps_tasks;
  // With a backup of every ps task's variables on the next one, a ps task may die: the
  // coordinator and the workers fail over, and stop naming the variables when both copies died.
  const bool ps_replicated =
      ps_run && experiment.strategy().parameter_server().replication() == 2 && ps > 1;
  bool ps_stopped = false;
  while (running > 0) {
    for (auto& w : group) {
      if (w.exit_code) continue;
      w.process->pump_for(std::chrono::milliseconds(running > 4 ? 2 : 10));
      forward_output(w);
      if (auto code = w.process->poll_exit()) {
        while (!w.process->output_closed() && w.process->pump_for(std::chrono::milliseconds(50))) {
        }
        forward_output(w);
        w.exit_code = code;
        --running;
        if (!w.ps) --workers_running;
        // A ps task exits 0 when stopped (by a signal or because the job is over); one that the
        // end of the job's SIGTERM reached before it could catch it was stopped all the same.
        const bool expected = *code == 0 ||
                              (!w.ps && g_signal.load() != 0 && (*code == 128 + g_signal.load())) ||
                              (w.ps && ps_stopped && *code == 128 + SIGTERM);
        // In a parameter_server run the coordinator (worker 0) reschedules a lost worker's
        // steps on the others: the launch goes on. A ps task or the coordinator is needed.
        const bool survivable = ps_run && !w.ps && w.name != "/job:worker/task:0";
        // Task k's variables are backed up on k + 1 and it backs up k - 1's: with either of
        // them gone too, some variables have no copy left.
        const int next = (w.index + 1) % std::max(ps, 1),
                  previous = (w.index + ps - 1) % std::max(ps, 1);
        const bool copy_left = !lost_ps_tasks.count(next) && !lost_ps_tasks.count(previous);
        if (!expected && w.ps && ps_replicated && !ps_stopped && failure.empty() && !copy_left) {
          failure =
              w.name + " (pid " + std::to_string(w.process->pid()) + ") " + describe_exit(*code) +
              " after /job:ps/task:" + std::to_string(lost_ps_tasks.count(next) ? next : previous) +
              ": no copy of the variables they shared is left (replication 2 keeps one "
              "backup)";
          std::fprintf(stderr, "troupe launch: %s; stopping the other tasks\n", failure.c_str());
          stop_at = Clock::now() + std::chrono::milliseconds(grace_ms);
        } else if (!expected && w.ps && ps_replicated && !ps_stopped && failure.empty()) {
          lost_ps_tasks.insert(w.index);
          ++lost_ps;
          std::fprintf(stderr,
                       "troupe launch: %s (pid %d) %s; replication 2: the backup of its "
                       "variables on /job:ps/task:%d serves them from now on (the workers fail "
                       "over to it)\n",
                       w.name.c_str(), int(w.process->pid()), describe_exit(*code).c_str(),
                       (w.index + 1) % ps);
        } else if (!expected && survivable && failure.empty()) {
          ++lost_workers;
          std::fprintf(stderr,
                       "troupe launch: %s (pid %d) %s; the coordinator reschedules its steps on "
                       "the other workers\n",
                       w.name.c_str(), int(w.process->pid()), describe_exit(*code).c_str());
        } else if (!expected && failure.empty()) {
          failure =
              w.name + " (pid " + std::to_string(w.process->pid()) + ") " + describe_exit(*code);
          std::fprintf(stderr, "troupe launch: %s; stopping the other tasks\n", failure.c_str());
          stop_at = Clock::now() + std::chrono::milliseconds(grace_ms);
        }
      }
    }
    const int signals = g_signals.load();
    if (signals > forwarded) {
      const int sig = g_signal.load();
      if (forwarded == 0 && signals == 1) {
        std::fprintf(stderr,
                     "troupe launch: %s: every worker stops after its current steps and "
                     "writes a checkpoint (again to stop at once)\n",
                     ::strsignal(sig));
        for (auto& w : group)
          if (!w.exit_code) w.process->signal(sig);
      } else {
        for (auto& w : group)
          if (!w.exit_code) w.process->signal(SIGKILL);
      }
      forwarded = signals;
    }
    // The workers are done: the ps tasks have served their purpose.
    if (workers_running == 0 && running > 0 && !ps_stopped && !stop_at) {
      ps_stopped = true;
      std::fprintf(stderr, "troupe launch: the workers have finished; stopping the ps tasks\n");
      for (auto& w : group)
        if (!w.exit_code) w.process->signal(SIGTERM);
      kill_at = Clock::now() + std::chrono::seconds(10);
    }
    if (stop_at && Clock::now() >= *stop_at && !kill_at) {
      for (auto& w : group)
        if (!w.exit_code) w.process->signal(SIGTERM);
      kill_at = Clock::now() + std::chrono::seconds(5);
    }
    if (kill_at && Clock::now() >= *kill_at)
      for (auto& w : group)
        if (!w.exit_code) w.process->signal(SIGKILL);
  }
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  if (!failure.empty()) {
    std::fprintf(stderr, "troupe launch: failed: %s\n", failure.c_str());
    return 1;
  }
  if (g_signal.load() != 0) return 128 + g_signal.load();
  if (lost_ps > 0)
    std::fprintf(stderr,
                 "troupe launch: the run finished; %d of %d ps task(s) were lost, their "
                 "variables served by their backups\n",
                 lost_ps, ps);
  if (lost_workers > 0)
    std::fprintf(stderr, "troupe launch: the run finished; %d of %d worker(s) were lost\n",
                 lost_workers, workers);
  else
    std::fprintf(stderr, "troupe launch: all %d worker(s)%s finished\n", workers,
                 evaluator ? " and the evaluator" : "");
  if (ps > 0 && lost_ps == 0)
    std::fprintf(stderr, "troupe launch: all %d ps task(s) stopped\n", ps);
  else if (ps > 0)
    std::fprintf(stderr, "troupe launch: the other %d ps task(s) stopped\n", ps - lost_ps);
  return 0;
}

}  // namespace troupe::cli
