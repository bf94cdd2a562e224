#include "experiment/run/ps_experiment_runner.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>

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
  if (ps.replication() > 1)
    throw unimplemented("strategy.replication: " + std::to_string(ps.replication()) +
                        " backup shards are not implemented; use 1");
  if (options.workers)
    throw unimplemented(
        "strategy.kind parameter_server runs its workers in this process (troupe run); as one "
        "worker of a troupe server cluster it is not supported yet");
  if (options.resume)
    throw unimplemented(
        "--resume: parameter_server runs write checkpoints but cannot resume from them yet");
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

// Every variable and slot, pulled from the shards between steps (the run joins first), and
// the optimizer's update count, in the checkpoint format of the other strategies.
std::string save(PsTrainer& trainer, const std::string& dir, int64_t step, int64_t keep) {
  std::map<std::string, Tensor> tensors;
  auto& opt = trainer.optimizer();
  for (size_t i = 0; i < trainer.variables().size(); ++i) {
    auto& v = trainer.variables()[i];
    tensors.emplace(v.name(), v.storage().read(0));
    for (auto& slot : opt.slot_names())
      tensors.emplace(opt.slot(i, slot).name(), opt.slot(i, slot).storage().read(0));
  }
  tensors.emplace("optimizer/iterations", Tensor::from_scalar<int64_t>(trainer.updates_applied()));
  return checkpoint::write_checkpoint(dir, step, tensors, {}, {keep});
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

}  // namespace

ParameterServerStrategyOptions make_ps_strategy_options(const proto::ParameterServerSpec& spec) {
  ParameterServerStrategyOptions o;
  o.partitioner = experiment::make_experiment_partitioner(spec.partitioner());
  o.placement = spec.placement().empty() ? "round_robin" : spec.placement();
  return o;
}

RunSummary run_ps_experiment(caf::actor_system& system, const proto::Experiment& e,
                             const RunOptions& options) {
  refuse_unsupported(e, options);
  const auto& spec = e.strategy().parameter_server();
  const int workers = int(spec.workers());
  RunSummary summary;
  summary.run_dir = run_directory(e, options.run_dir);
  check_run_directory(summary.run_dir, false, options.overwrite);
  if (options.overwrite) remove_earlier_run(summary.run_dir);
  std::filesystem::create_directories(summary.run_dir);
  // The timeline is written after the last step: a path that cannot be written fails now.
  if (!options.timeline_path.empty()) Timeline::check_writable(options.timeline_path);
  const int64_t total = options.steps > 0 ? options.steps : e.train().steps();
  const int64_t log_every = e.train().log_every() > 0 ? e.train().log_every() : total;
  const int64_t global_batch = e.data().global_batch();
  const int64_t checkpoint_every = e.train().checkpoint_every();

  Shards shards;
  auto kernels = default_kernels();
  for (int64_t k = 0; k < spec.num_ps(); ++k)
    shards.actors.push_back(spawn_ps_shard(system, {"ps:" + std::to_string(k), kernels}));
  ParameterServerStrategy strategy(system, shards.actors, make_ps_strategy_options(spec));
  ClusterCoordinator coordinator(system, {workers, 2, 1});
  const ModelRegistry registry = ModelRegistry::with_builtins();
  std::shared_ptr<const Model> model =
      registry.create_model(e.model().kind(), make_model_config(e));
  PsTrainingOptions training;
  training.mode = parse_ps_training_mode(spec.mode().empty() ? "async" : spec.mode());
  if (training.mode == PsTrainingMode::sync) {
    training.replicas_to_aggregate = spec.replicas_to_aggregate();
    training.total_num_replicas = spec.total_num_replicas();
  }
  PsTrainer trainer(strategy, coordinator, model, make_optimizer_config(e.optimizer()), training);
  const PerWorkerDataset data = coordinator.create_per_worker_dataset([&e, workers,
                                                                       global_batch](int w) {
    auto it = std::make_shared<data::Iterator>(
        make_training_pipeline(e, data::InputContext(workers, w, workers), global_batch / workers)
            .make_iterator());
    return ElementFn([it] {
      auto element = it->next();
      if (!element) throw out_of_range("the training pipeline ended");
      return *element;
    });
  });

  std::shared_ptr<Timeline> timeline;
  if (!options.timeline_path.empty()) timeline = std::make_shared<Timeline>();
  if (timeline) observe_steps(trainer, timeline);

  summary.metrics_csv = summary.run_dir + "/metrics.csv";
  ProgressReporter progress(options.out, options.tty, summary.metrics_csv);
  EventWriter events(summary.run_dir);
  summary.events_file = events.path();
  const auto run_start = Clock::now();
  int64_t step = 0;
  ProgressPoint point{0, total};
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
    progress.tick(point);
    if (step % log_every == 0 || step == total) {
      progress.log(point);
      if (options.stop_after_log) stop_after_log = options.stop_after_log(point);
      events.add_scalars(step, {{"loss", float(point.loss)},
                                {"examples_per_second", float(point.examples_per_s)}});
    }
    if (checkpoint_every > 0 && step % checkpoint_every == 0 && step != total)
      summary.checkpoint = save(trainer, summary.run_dir, step, e.train().keep());
  }
  progress.finish();
  // At the end, and when stopped: nothing trained is lost.
  summary.checkpoint = save(trainer, summary.run_dir, step, e.train().keep());
  events.close();
  const double elapsed =
      std::max(std::chrono::duration<double>(Clock::now() - run_start).count(), 1e-9);
  summary.last_step = step;
  summary.final_loss = point.loss;
  summary.final_accuracy = -1;
  summary.examples_per_s = double(step) * double(global_batch) / elapsed;
  if (timeline) {
    timeline->write(options.timeline_path);
    summary.timeline = options.timeline_path;
  }
  std::fprintf(options.out,
               "parameter_server: %lld ps task(s), %d worker(s), mode %s, %lld update(s) applied, "
               "%lld step(s) rescheduled\n",
               static_cast<long long>(spec.num_ps()), workers,
               training.mode == PsTrainingMode::sync ? "sync" : "async",
               static_cast<long long>(trainer.updates_applied()),
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
