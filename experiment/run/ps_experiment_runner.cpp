#include "experiment/run/ps_experiment_runner.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include <caf/all.hpp>

#include "actors/ps_shard.hpp"
#include "coordinator/ps/cluster_coordinator.hpp"
#include "coordinator/ps/parameter_server_strategy.hpp"
#include "experiment/checkpoint/checkpoint.hpp"
#include "experiment/ps_layout.hpp"
#include "experiment/run/event_writer.hpp"
#include "experiment/run/experiment_input.hpp"
#include "experiment/run/experiment_setup.hpp"
#include "experiment/run/progress.hpp"
#include "experiment/run/ps_resume.hpp"
#include "experiment/run/run_directory.hpp"
#include "experiment/run/timeline.hpp"
#include "train/ps_trainer.hpp"
#include "train/registry.hpp"

namespace troupe {
namespace {

using Clock = std::chrono::steady_clock;

// Stops the shards when the run leaves, however it leaves.
struct Shards {
  std::vector<caf::actor> actors;
  ~Shards() {
    for (auto& a : actors) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }
};

void refuse_unsupported(const proto::Experiment& e, const RunOptions& options) {
  const auto& ps = e.strategy().parameter_server();
  if (options.workers)
    throw unimplemented(
        "strategy.kind parameter_server runs its workers in this process (troupe run) or as "
        "step hosts of its own cluster (troupe launch --ps); as one worker of a collective "
        "group it is not supported");
  if (auto& cluster = options.ps_cluster) {
    if (int64_t(cluster->shards.size()) != ps.num_ps() ||
        int64_t(cluster->workers.size()) != ps.workers())
      throw invalid_argument("strategy.num_ps " + std::to_string(ps.num_ps()) +
                             " and strategy.workers " + std::to_string(ps.workers()) +
                             " do not match the cluster's " +
                             std::to_string(cluster->shards.size()) + " ps task(s) and " +
                             std::to_string(cluster->workers.size()) + " worker(s)");
  }
  if (options.resume && ps.mode() == "sync") {
    const int64_t r = ps.replicas_to_aggregate() > 0 ? ps.replicas_to_aggregate() : ps.workers();
    if (ps.total_num_replicas() > r)
      throw unimplemented(
          "--resume: a sync parameter_server run with backup workers "
          "(strategy.total_num_replicas " +
          std::to_string(ps.total_num_replicas()) + " above replicas_to_aggregate " +
          std::to_string(r) +
          ") cannot resume: the tokens of earlier steps its stale gradients leave in the queue "
          "are not checkpointed");
  }
  if (options.ps_cluster && !options.timeline_path.empty())
    throw unimplemented(
        "--timeline: a parameter_server run across processes (troupe launch --ps) does not "
        "record its workers' steps yet; troupe run does");
  if (!e.train().step().empty() && e.train().step() != "train_step")
    throw unimplemented("train.step: parameter_server runs train with train_step only, got '" +
                        e.train().step() + "'");
  if (e.train().steps_per_execution() > 0)
    throw unimplemented(
        "train.steps_per_execution: parameter_server runs schedule one step per closure; remove "
        "it");
  if (!e.train().on_nan().empty() && e.train().on_nan() != "stop")
    throw unimplemented("train.on_nan: parameter_server runs stop at a non-finite loss; '" +
                        e.train().on_nan() + "' is not supported for them yet");
  if (e.data().global_batch() % ps.workers() != 0)
    throw invalid_argument("data.global_batch " + std::to_string(e.data().global_batch()) +
                           " does not split evenly over strategy.workers " +
                           std::to_string(ps.workers()));
}

// Distinct step ids applied at the shards to the model's variables (not the slots, updated
// with them): every update names its closure's step id and a shard applies an id once, so this
// counts the updates that reached the shards however often a closure ran (async: one per
// closure; sync: one per replicas_to_aggregate accepted gradients).
int64_t steps_applied_at_shards(const ParameterServerStrategy& strategy) {
  std::vector<std::pair<caf::actor, ps_save_msg>> saves;
  for (auto& v : strategy.placements())
    if (!v.on_coordinator && v.colocated_with.empty())
      for (auto& part : v.parts)
        saves.push_back({strategy.ps_shards()[size_t(part.task)], ps_save_msg{{part.name}}});
  std::vector<bool> seen;
  int64_t count = 0;
  auto mark = [&](uint64_t id) {
    if (id >= seen.size()) seen.resize(size_t(id) + 1, false);
    if (!seen[size_t(id)]) ++count;
    seen[size_t(id)] = true;
  };
  for (auto& checkpoint : strategy.client()->save_all(saves))
    for (auto& v : checkpoint.variables) {
      for (uint64_t id = 1; id <= v.applied_floor; ++id) mark(id);
      for (uint64_t id : v.applied_sparse) mark(id);
    }
  return count;
}

// Every variable and slot, pulled from the shards between steps (the run joins first), and
// the optimizer's update count, in the checkpoint format of the other strategies, with the
// batches each worker drew (ps_resume.hpp): counted here for the workers of this process, and
// reported with every answered step by the workers of other processes (ClusterCoordinator::
// batches_drawn). After the join every step counted is applied, and every step applied counted.
std::string save(PsTrainer& trainer, const std::vector<int64_t>& drawn, const std::string& dir,
                 int64_t step, int64_t keep, int64_t iterations) {
  auto tensors = ps_checkpoint_tensors(trainer);
  tensors["optimizer/iterations"] = Tensor::from_scalar<int64_t>(iterations);
  std::map<std::string, std::string> blobs;
  blobs["ps_worker_batches"] = format_worker_batches(drawn);
  // A sync run adds where its accumulator stands: taken after the join, when no worker holds
  // a token, so the global step and the gradients pending describe its queue.
  if (const SyncReplicas* sync = trainer.sync()) {
    const SyncReplicasStats stats = sync->stats();
    blobs["ps_sync"] = format_sync_state({stats.global_step, stats.accepted});
  }
  return checkpoint::write_checkpoint(dir, step, tensors, blobs, {keep});
}

// Each part of a worker's step as a timeline span on the worker's track (worker w: track w + 1,
// as replicas are): the whole closure in category "replica", its parts in category "ps" named
// "input", "token", "pull 3200 bytes", "push 96 bytes", "offer 96 bytes" (docs/compare.md).
// The observer holds the timeline: a closure still on a worker when the run unwinds finds it.
void observe_steps(PsTrainer& trainer, std::shared_ptr<Timeline> timeline) {
  trainer.set_observer([timeline](int worker, PsStepPart part, Timeline::Clock::time_point begin,
                                  Timeline::Clock::time_point end, int64_t bytes) {
    std::string name = ps_step_part_name(part);
    if (part == PsStepPart::step)
      timeline->add("worker_step", "replica", worker + 1, begin, end);
    else if (part == PsStepPart::pull || part == PsStepPart::push || part == PsStepPart::offer)
      timeline->add(name + " " + std::to_string(bytes) + " bytes", "ps", worker + 1, begin, end);
    else
      timeline->add(name, "ps", worker + 1, begin, end);
  });
}

// What a checkpoint's ps_sync blob says about resuming it in `trainer`'s mode: the state a sync
// run restores, nothing for async. A checkpoint of the other mode is refused (sync counts one
// update per global step, async one per worker step: the update count Adam's bias correction
// reads, and the input each update saw, would change meaning), and so is one taken with
// gradients pending (replicas_to_aggregate does not divide the worker steps of a checkpoint
// window): they would be lost, and the run would not continue where it stopped.
std::optional<PsSyncState> check_sync_checkpoint(const PsTrainer& trainer,
                                                 const checkpoint::Checkpoint& ckpt,
                                                 const std::string& path) {
  auto blob = ckpt.blobs.find("ps_sync");
  const SyncReplicas* sync = trainer.sync();
  if (!sync) {
    if (blob != ckpt.blobs.end())
      throw failed_precondition("--resume: checkpoint '" + path +
                                "' was written by a sync parameter_server run (at "
                                "global step " +
                                std::to_string(parse_sync_state(blob->second, path).global_step) +
                                "); this run is async (strategy.mode): resume it in sync mode");
    return std::nullopt;
  }
  if (blob == ckpt.blobs.end())
    throw failed_precondition("--resume: checkpoint '" + path +
                              "' was written by an async parameter_server run; this run is sync "
                              "(strategy.mode): resume it in async mode");
  const PsSyncState state = parse_sync_state(blob->second, path);
  if (state.pending > 0)
    throw failed_precondition(
        "--resume: checkpoint '" + path + "' was taken with " + std::to_string(state.pending) +
        " gradient(s) of global step " + std::to_string(state.global_step) +
        " accumulated but not applied (replicas_to_aggregate " +
        std::to_string(sync->plan().replicas_to_aggregate()) +
        " does not divide the worker steps between checkpoints): it cannot resume exactly");
  return state;
}

}  // namespace

ParameterServerStrategyOptions make_ps_strategy_options(const proto::ParameterServerSpec& spec) {
  ParameterServerStrategyOptions o;
  o.partitioner = experiment::make_experiment_partitioner(spec.partitioner());
  o.placement = spec.placement().empty() ? "round_robin" : spec.placement();
  o.replication = spec.replication() > 0 ? spec.replication() : 1;
  for (int64_t k = 0; k < spec.num_ps(); ++k)
    o.shard_names.push_back("'ps:" + std::to_string(k) + "' (/job:ps/task:" + std::to_string(k) +
                            ")");
  return o;
}

ElementFn make_ps_worker_input(const proto::Experiment& e, int worker) {
  const int workers = int(e.strategy().parameter_server().workers());
  auto it = std::make_shared<data::Iterator>(
      make_training_pipeline(e, data::InputContext(workers, worker, workers),
                             e.data().global_batch() / workers)
          .make_iterator());
  return ElementFn([it] {
    auto element = it->next();
    if (!element) throw out_of_range("the training pipeline ended");
    return *element;
  });
}

PsTrainingOptions make_ps_training_options(const proto::ParameterServerSpec& spec) {
  PsTrainingOptions training;
  training.mode = parse_ps_training_mode(spec.mode().empty() ? "async" : spec.mode());
  if (training.mode == PsTrainingMode::sync) {
    training.replicas_to_aggregate = spec.replicas_to_aggregate();
    training.total_num_replicas = spec.total_num_replicas();
  }
  training.num_workers = spec.workers();
  return training;
}

RunSummary run_ps_experiment(caf::actor_system& system, const proto::Experiment& e,
                             const RunOptions& options) {
  refuse_unsupported(e, options);
  const auto& spec = e.strategy().parameter_server();
  const int workers = int(spec.workers());
  RunSummary summary;
  summary.run_dir = run_directory(e, options.run_dir);
  check_run_directory(summary.run_dir, options.resume, options.overwrite);
  if (options.overwrite && !options.resume) remove_earlier_run(summary.run_dir);
  std::filesystem::create_directories(summary.run_dir);
  // The timeline is written after the last step: a path that cannot be written fails now.
  if (!options.timeline_path.empty()) Timeline::check_writable(options.timeline_path);
  const int64_t total = options.steps > 0 ? options.steps : e.train().steps();
  const int64_t log_every = e.train().log_every() > 0 ? e.train().log_every() : total;
  const int64_t global_batch = e.data().global_batch();
  const int64_t checkpoint_every = e.train().checkpoint_every();

  const PsRemoteCluster* cluster = options.ps_cluster.get();
  Shards shards;  // in-process shards, stopped when the run leaves
  std::vector<caf::actor> ps_tasks;
  if (cluster) {
    ps_tasks = cluster->shards;
  } else {
    auto kernels = default_kernels();
    for (int64_t k = 0; k < spec.num_ps(); ++k)
      shards.actors.push_back(spawn_ps_shard(system, {"ps:" + std::to_string(k), kernels}));
    ps_tasks = shards.actors;
  }
  auto ps_options = make_ps_strategy_options(spec);
  ps_options.timeouts.flush_denormals = !e.train().keep_denormals();
  ParameterServerStrategy strategy(system, ps_tasks, ps_options);
  // Batches drawn by each in-process worker: checkpointed, and skipped again on resume.
  // Declared before the coordinator, whose workers count into them, so that they outlive it.
  std::vector<std::atomic<int64_t>> drawn(static_cast<size_t>(workers));
  std::vector<int64_t> skip(static_cast<size_t>(workers), 0);
  ClusterCoordinator coordinator = [&] {
    if (cluster) return ClusterCoordinator(system, cluster->workers, {workers, 2, 1});
    return ClusterCoordinator(system, {workers, 2, 1});
  }();
  const ModelRegistry registry = ModelRegistry::with_builtins();
  std::shared_ptr<const Model> model =
      registry.create_model(e.model().kind(), make_model_config(e));
  PsTrainingOptions training = make_ps_training_options(spec);
  PsTrainer trainer(strategy, coordinator, model, make_optimizer_config(e.optimizer()), training);
  int64_t step = 0;
  // Across processes the shards count the updates of this run (fresh shards, step ids from 1):
  // a resumed run adds them to the checkpoint's count.
  int64_t restored_iterations = 0;
  if (options.resume) {
    auto latest = checkpoint::latest_checkpoint(summary.run_dir);
    if (!latest)
      throw not_found("--resume: no checkpoint in '" + summary.run_dir + "' to resume from");
    auto ckpt = checkpoint::read_checkpoint(*latest);
    if (!ckpt.blobs.count("ps_worker_batches"))
      throw not_found("checkpoint '" + *latest +
                      "' has no 'ps_worker_batches' (not written by a parameter_server "
                      "run?)");
    skip = parse_worker_batches(ckpt.blobs.at("ps_worker_batches"), size_t(workers), *latest);
    const std::optional<PsSyncState> sync_state = check_sync_checkpoint(trainer, ckpt, *latest);
    restore_ps_checkpoint(trainer, ckpt.tensors, *latest);
    if (sync_state) trainer.sync()->restore(sync_state->global_step);
    restored_iterations = trainer.updates_applied();
    step = ckpt.step;
    const int64_t reached = last_logged_step(summary.run_dir);
    std::fprintf(options.out,
                 "resumed at step %lld of the checkpoint %s; %lld step(s) after it were lost\n",
                 static_cast<long long>(step), latest->c_str(),
                 static_cast<long long>(std::max<int64_t>(reached - step, 0)));
    if (sync_state)
      std::fprintf(options.out, "sync: the token queue restarts at global step %lld\n",
                   static_cast<long long>(sync_state->global_step));
  }
  for (int w = 0; w < workers; ++w) drawn[size_t(w)] = skip[size_t(w)];
  summary.first_step = step;
  // Remote workers make the same dataset (experiment/run/ps_worker_host.cpp, from
  // make_ps_worker_input); this one serves the in-process workers.
  const PerWorkerDataset data = coordinator.create_per_worker_dataset([&e, &drawn, &skip](int w) {
    ElementFn next = make_ps_worker_input(e, w);
    for (int64_t k = 0; k < skip[size_t(w)]; ++k) {
      try {
        next();
      } catch (const Error& err) {
        if (err.code() != Code::out_of_range) throw;
        throw out_of_range("the training pipeline ended while resuming");
      }
    }
    std::atomic<int64_t>* count = &drawn[size_t(w)];
    return ElementFn([next, count] {
      auto element = next();
      count->fetch_add(1);
      return element;
    });
  });
  // Each worker process resumes its own dataset where the checkpoint says (it is told, not
  // the run directory: across hosts it cannot read it). A worker that died in the run that
  // wrote the checkpoint restarts at its last answered step's count.
  if (cluster && options.resume) coordinator.set_input_positions(data, skip);
  // Batches drawn by each worker, for a checkpoint.
  auto batches_drawn = [&] {
    if (cluster) return coordinator.batches_drawn(data);
    std::vector<int64_t> counts;
    for (auto& d : drawn) counts.push_back(d.load());
    return counts;
  };
  // Updates applied so far: the trainer's count in process; across processes the workers apply
  // them, so the shards are asked.
  auto iterations = [&] {
    return cluster ? restored_iterations + steps_applied_at_shards(strategy)
                   : trainer.updates_applied();
  };

  std::shared_ptr<Timeline> timeline;
  if (!options.timeline_path.empty()) timeline = std::make_shared<Timeline>();
  if (timeline) observe_steps(trainer, timeline);

  summary.metrics_csv = summary.run_dir + "/metrics.csv";
  ProgressReporter progress(options.out, options.tty, summary.metrics_csv);
  EventWriter events(summary.run_dir);
  summary.events_file = events.path();
  const auto run_start = Clock::now();
  const int64_t first_step = step;
  ProgressPoint point{step, total};
  EtaRate eta_rate;
  bool stop_after_log = false;
  while (step < total) {
    if (stop_after_log || (options.stop && options.stop->load())) {
      summary.interrupted = true;
      break;
    }
    const auto window_start = Clock::now();
    int64_t window = std::min(log_every - step % log_every, total - step);
    if (checkpoint_every > 0) window = std::min(window, checkpoint_every - step % checkpoint_every);
    std::vector<RemoteValue> values;
    {
      Timeline::Span span(timeline.get(),
                          "steps " + std::to_string(step + 1) + "-" + std::to_string(step + window),
                          "step", 0);
      for (int64_t k = 0; k < window * workers; ++k) values.push_back(trainer.schedule_step(data));
      coordinator.join();
    }
    double loss = 0, rows = 0;
    for (auto& v : values) {
      auto out = v.fetch();
      loss += out.at(0).scalar<double>();
      rows += out.at(1).scalar<double>();
    }
    step += window;
    const double seconds =
        std::max(std::chrono::duration<double>(Clock::now() - window_start).count(), 1e-9);
    point = {step, total, loss / std::max(rows, 1.0), -1, double(window) / seconds, rows / seconds};
    point.eta_steps_per_s = eta_rate.after_chunk(step, Clock::now(), point.steps_per_s);
    progress.tick(point);
    if (step % log_every == 0 || step == total) {
      progress.log(point);
      if (options.stop_after_log) stop_after_log = options.stop_after_log(point);
      events.add_scalars(step, {{"loss", float(point.loss)},
                                {"examples_per_second", float(point.examples_per_s)}});
    }
    if (checkpoint_every > 0 && step % checkpoint_every == 0 && step != total)
      summary.checkpoint =
          save(trainer, batches_drawn(), summary.run_dir, step, e.train().keep(), iterations());
  }
  progress.finish();
  // At the end, and when stopped: nothing trained is lost.
  const int64_t applied = iterations();
  summary.checkpoint =
      save(trainer, batches_drawn(), summary.run_dir, step, e.train().keep(), applied);
  events.close();
  const double elapsed =
      std::max(std::chrono::duration<double>(Clock::now() - run_start).count(), 1e-9);
  summary.last_step = step;
  summary.final_loss = point.loss;
  summary.final_accuracy = -1;
  summary.examples_per_s = double(step - first_step) * double(global_batch) / elapsed;
  if (timeline) {
    timeline->write(options.timeline_path);
    summary.timeline = options.timeline_path;
  }
  const std::string mode =
      trainer.sync()
          ? "sync (global step " + std::to_string(trainer.sync()->stats().global_step) + ")"
          : "async";
  std::fprintf(
      options.out,
      "parameter_server: %lld ps task(s), %d worker(s)%s, mode %s, %lld update(s) "
      "applied%s, %lld step(s) rescheduled\n",
      static_cast<long long>(spec.num_ps()), workers,
      cluster ? (" (" + std::to_string(coordinator.live_workers()) + " alive)").c_str() : "",
      mode.c_str(), static_cast<long long>(applied), cluster ? " at the shards" : "",
      static_cast<long long>(coordinator.rescheduled()));
  const PsTraffic traffic = trainer.traffic();
  if (traffic.steps > 0)
    std::fprintf(options.out,
                 "parameter_server: per worker step %.0f bytes pulled, %.0f bytes pushed, %.3f ms "
                 "waiting for parameters\n",
                 double(traffic.bytes_pulled) / double(traffic.steps),
                 double(traffic.bytes_pushed) / double(traffic.steps),
                 1000 * traffic.parameter_wait_seconds / double(traffic.steps));
  return summary;
}

}  // namespace troupe
