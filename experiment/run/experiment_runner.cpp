#include "experiment/run/experiment_runner.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iterator>
#include <optional>

#include "coordinator/device_inventory.hpp"
#include "coordinator/distributed_dataset.hpp"
#include "core/float_mode.hpp"
#include "experiment/checkpoint/checkpoint.hpp"
#include "experiment/experiment_file.hpp"
#include "experiment/run/background_writer.hpp"
#include "experiment/run/event_writer.hpp"
#include "experiment/run/experiment_input.hpp"
#include "experiment/run/experiment_setup.hpp"
#include "experiment/run/progress.hpp"
#include "experiment/run/ps_experiment_runner.hpp"
#include "experiment/run/run_directory.hpp"
#include "experiment/run/timeline.hpp"
#include "train/registry.hpp"
#include "train/trainer.hpp"

namespace troupe {
namespace {

using Clock = std::chrono::steady_clock;

/// Everything a checkpoint must hold for an exact resume, by name.
std::map<std::string, DistributedVariable> checkpointed_variables(Trainer& trainer) {
  std::map<std::string, DistributedVariable> vars;
  auto& opt = trainer.optimizer();
  for (size_t i = 0; i < trainer.variables().size(); ++i) {
    auto& v = trainer.variables()[i];
    vars.emplace(v.name(), v);
    for (auto& slot : opt.slot_names()) {
      auto& s = opt.slot(i, slot);
      vars.emplace(s.name(), s);
    }
  }
  return vars;
}

std::string save(Trainer& trainer, const std::string& input_position, const std::string& dir,
                 int64_t step, int replicas, int64_t keep) {
  std::map<std::string, Tensor> tensors;
  // A GPU run's variables live in device memory; the checkpoint file holds host bytes.
  for (auto& [name, v] : checkpointed_variables(trainer))
    tensors.emplace(name, to_host(v.save_value()));
  tensors.emplace("optimizer/iterations",
                  Tensor::from_scalar<int64_t>(trainer.optimizer().iterations()));
  std::map<std::string, std::string> blobs{{"iterator", input_position},
                                           {"replicas", std::to_string(replicas)}};
  return checkpoint::write_checkpoint(dir, step, tensors, blobs, {keep});
}

/// Restores variables, optimizer state and the input position; validates everything first.
int64_t restore(Trainer& trainer, DistributedIterator& iterator, const std::string& path,
                int replicas, bool multi_worker) {
  auto ckpt = checkpoint::read_checkpoint(path);  // validated whole: CRCs, sizes, files
  auto vars = checkpointed_variables(trainer);
  for (auto& [name, v] : vars) {
    auto it = ckpt.tensors.find(name);
    if (it == ckpt.tensors.end())
      throw not_found("checkpoint '" + path + "' has no tensor '" + name +
                      "' (written by a different model or optimizer?)");
    if (it->second.dtype() != v.dtype() || it->second.shape() != v.shape())
      throw invalid_argument("checkpoint '" + path + "': tensor '" + name + "' is " +
                             it->second.description() + " but the model needs " +
                             std::string(dtype_name(v.dtype())) + v.shape().to_string());
  }
  auto iterations = ckpt.tensors.find("optimizer/iterations");
  if (iterations == ckpt.tensors.end())
    throw not_found("checkpoint '" + path + "' has no tensor 'optimizer/iterations'");
  // Everything checked: now write (nothing is half-loaded on a bad checkpoint).
  for (auto& [name, v] : vars) v.restore(ckpt.tensors.at(name));
  trainer.optimizer().set_iterations(iterations->second.scalar<int64_t>());
  auto saved_replicas = ckpt.blobs.count("replicas") ? std::stoi(ckpt.blobs.at("replicas")) : -1;
  if (saved_replicas == replicas && ckpt.blobs.count("iterator") && !multi_worker) {
    iterator.restore(ckpt.blobs.at("iterator"));
  } else {
    // A different replica count splits global batches differently, and across workers the
    // chief's saved position is only the chief's (FILE sharding reads other files elsewhere);
    // the global position is the same: skip the batches already consumed.
    for (int64_t s = 0; s < ckpt.step; ++s) iterator.get_next();
  }
  return ckpt.step;
}

// The timeline name of the chunk of `count` steps after `done`: "step N" or "steps A-B".
std::string chunk_name(int64_t done, int64_t count) {
  if (count == 1) return "step " + std::to_string(done + 1);
  return "steps " + std::to_string(done + 1) + "-" + std::to_string(done + count);
}

// train.on_nan: skip_step: says how many steps were skipped since the last log, and in all.
void warn_skipped(std::FILE* out, int64_t skipped, int64_t& reported) {
  if (skipped == reported) return;
  std::fprintf(out,
               "warning: skipped %lld step(s) with a non-finite loss or gradients since the last "
               "log, %lld in all (train.on_nan: skip_step)\n",
               static_cast<long long>(skipped - reported), static_cast<long long>(skipped));
  reported = skipped;
}

// True on every worker when `mine` is true on any.
bool any_worker(Strategy& strategy, bool mine) {
  const auto& devices = strategy.extended().worker_devices();
  std::vector<Tensor> flags(devices.size(), Tensor::from_scalar<int64_t>(0));
  flags[0] = Tensor::from_scalar<int64_t>(mine ? 1 : 0);
  return strategy.reduce(ReduceOp::sum, PerReplica(flags, devices)).scalar<int64_t>() > 0;
}

// A timeline span per collective and merge_call of the replica ("all_reduce 814120 bytes"), in
// category "collective" on the replica's track: the compute / communication split of a step.
void observe_collectives(ReplicaContext& ctx, Timeline& timeline) {
  const int track = ctx.replica_id_in_sync_group() + 1;
  ctx.set_collective_observer([&timeline, track](const char* kind, Timeline::Clock::time_point b,
                                                 Timeline::Clock::time_point e, int64_t bytes) {
    timeline.add(std::string(kind) + " " + std::to_string(bytes) + " bytes", "collective", track, b,
                 e);
  });
}

bool has_accuracy(const proto::Experiment& e) {
  return e.model().kind() == "softmax" || e.model().kind() == "mlp";
}

// run_experiment's body; `doing` says what it is at, for an out-of-memory message.
RunSummary train_experiment(caf::actor_system& system, const proto::Experiment& e,
                            const RunOptions& options, std::string& doing) {
  RunSummary summary;
  auto set_phase = [&](RunPhase p) {
    if (options.phase) options.phase->store(p);
  };
  set_phase(RunPhase::setup);
  summary.run_dir = run_directory(e, options.run_dir);
  // Across workers the chief owns the run directory; another worker writes what the chief
  // writes into a temporary directory of its own and removes it (TF's multi-worker saving).
  const bool chief = !options.workers || options.workers->worker_index() == 0;
  WorkerTempDirectory temp(
      chief ? "" : worker_temp_directory(summary.run_dir, options.workers->worker_index()));
  const std::string write_dir = chief ? summary.run_dir : temp.path();
  if (chief) {
    check_run_directory(summary.run_dir, options.resume, options.overwrite);
    if (options.overwrite && !options.resume) remove_earlier_run(summary.run_dir);
    std::filesystem::create_directories(summary.run_dir);
  }
  const std::string timeline_path =
      chief || options.timeline_path.empty() ? options.timeline_path : write_dir + "/timeline.json";
  // The timeline is written after the last step: a path that cannot be written fails now.
  if (!timeline_path.empty()) Timeline::check_writable(timeline_path);
  const int64_t total = options.steps > 0 ? options.steps : e.train().steps();
  // 0: no periodic log, only the last step's (parse_experiment writes 50 when not given).
  const int64_t log_every = e.train().log_every();
  const int64_t global_batch = e.data().global_batch();

  doing = "creating the strategy";
  auto strategy = make_experiment_strategy(system, e, options.workers);
  const int replicas = strategy->num_replicas_in_sync();
  const bool multi_worker = strategy->num_workers() > 1;
  std::optional<ModelRegistry> builtins;
  if (!options.registry) builtins = ModelRegistry::with_builtins();
  const ModelRegistry& registry = options.registry ? *options.registry : *builtins;
  std::shared_ptr<const Model> model =
      registry.create_model(e.model().kind(), make_model_config(e));
  doing = "creating the model's variables and optimizer slots (model." +
          std::string(e.model().kind() == "embedding" ? "num_users/num_items" : "hidden") + ")";
  std::optional<Trainer> trainer;
  {
    auto scope = strategy->scope();
    trainer.emplace(*strategy, model, make_optimizer_config(e.optimizer()));
  }
  trainer->optimizer().set_on_non_finite(
      parse_on_non_finite(e.train().on_nan().empty() ? "stop" : e.train().on_nan()));
  const StepFn step_fn =
      registry.make_step(e.train().step().empty() ? "train_step" : e.train().step(), *trainer);
  const Tensor global_batch_arg = Tensor::from_scalar<int64_t>(global_batch);
  const int64_t per_execution = experiment::steps_per_execution(e.train());
  doing = "building the input pipeline (data.global_batch " + std::to_string(global_batch) + ")";
  set_phase(RunPhase::waiting_for_input);
  ExperimentInput input = make_experiment_input(system, *strategy, e);
  auto iterator = input.dataset.make_iterator();
  set_phase(RunPhase::setup);

  int64_t step = 0;
  if (options.resume) {
    auto latest = checkpoint::latest_checkpoint(summary.run_dir);
    if (!latest)
      throw not_found("--resume: no checkpoint in '" + summary.run_dir + "' to resume from");
    step = restore(*trainer, iterator, *latest, replicas, multi_worker);
    std::fprintf(options.out, "resumed from %s at step %lld\n", latest->c_str(),
                 static_cast<long long>(step));
  }
  summary.first_step = step;

  summary.metrics_csv = write_dir + "/metrics.csv";
  ProgressReporter progress(options.out, options.tty, summary.metrics_csv);
  EventWriter events(write_dir);
  summary.events_file = events.path();
  std::optional<Timeline> timeline;
  if (!timeline_path.empty()) timeline.emplace();
  Timeline* tl = timeline ? &*timeline : nullptr;
  // Progress lines, metrics.csv and events are written here, off the steps' path (after
  // `progress` and `events`: it finishes their jobs before they go).
  BackgroundWriter writer;

  doing = "training";
  trainer->metrics().reset();
  auto window_start = Clock::now();
  auto run_start = Clock::now();
  int64_t window_steps = 0;
  // Where the steady state starts: the end of the first logged window (unset until then).
  std::optional<Clock::time_point> steady_start;
  ProgressPoint point{step, total};
  EtaRate eta_rate;
  auto checkpoint_now = [&] {
    Timeline::Span span(tl, "checkpoint", "checkpoint", 0);
    // The input position comes from the input workers, which may be blocked themselves on input
    // that never comes (a FIFO nobody writes, opened as the run set up): a stop gives up on that
    // wait like on any other wait for input, before anything of the checkpoint is written.
    set_phase(RunPhase::waiting_for_input);
    const std::string input_position = iterator.save();
    set_phase(RunPhase::checkpoint);
    summary.checkpoint =
        save(*trainer, input_position, write_dir, step, replicas, e.train().keep());
    set_phase(RunPhase::step);
  };

  const int64_t checkpoint_every = e.train().checkpoint_every();
  // After a step timeout a replica may still run the step below, which uses the trainer, the
  // step function and the timeline: leaving this function waits for it before they go.
  struct WaitForReplicas {
    Strategy& strategy;
    ~WaitForReplicas() { strategy.wait_for_replicas(); }
  } wait_for_replicas{*strategy};
  bool stop_after_log = false;
  // One strategy.run per chunk of steps after `done`; a chunk never crosses a log or checkpoint
  // step, so those happen at the same steps whatever steps_per_execution is.
  auto chunk_after = [&](int64_t done) {
    int64_t chunk = std::min(per_execution, total - done);
    if (log_every > 0) chunk = std::min(chunk, log_every - done % log_every);
    if (checkpoint_every > 0) chunk = std::min(chunk, checkpoint_every - done % checkpoint_every);
    return chunk;
  };
  while (step < total) {
    bool stop = stop_after_log || (options.stop && options.stop->load());
    // Every worker must stop at the same step, or the others would wait in its collectives.
    if (multi_worker) stop = any_worker(*strategy, stop);
    if (stop) {
      summary.interrupted = true;
      break;
    }
    const int64_t chunk = chunk_after(step);
    std::vector<ValueArg> args;  // features 0, labels 0, global batch, features 1, ...
    set_phase(RunPhase::waiting_for_input);
    {
      // The chunk's steps: asked for during the last chunk, in one round trip (get_next_steps).
      Timeline::Span span(tl, "get_next", "input", 0);
      std::vector<std::vector<PerReplica>> batches = iterator.get_next_steps(chunk);
      if (int64_t(batches.size()) < chunk) throw DistributedIterator::end_of_sequence();
      for (auto& batch : batches) {
        args.push_back(std::move(batch.at(0)));
        args.push_back(std::move(batch.at(1)));
        args.push_back(global_batch_arg);
      }
    }
    // The next chunk's input is asked for now and answered while this one computes (a save of
    // the iterator's position hands it back first, so checkpoints and stops are exact).
    if (step + chunk < total) iterator.prefetch_steps(chunk_after(step + chunk));
    set_phase(RunPhase::step);
    {
      Timeline::Span span(tl, chunk_name(step, chunk), "step", 0);
      strategy->run(
          [&, chunk](ReplicaContext& ctx, const std::vector<Tensor>& a) {
            if (tl) observe_collectives(ctx, *tl);
            std::vector<Tensor> outputs;
            for (int64_t k = 0; k < chunk; ++k) {
              Timeline::Span replica_span(tl, "replica_step", "replica",
                                          ctx.replica_id_in_sync_group() + 1);
              auto out = step_fn(ctx, {a.at(3 * k), a.at(3 * k + 1), a.at(3 * k + 2)});
              outputs.insert(outputs.end(), std::make_move_iterator(out.begin()),
                             std::make_move_iterator(out.end()));
            }
            return outputs;
          },
          args);
    }
    step += chunk;
    window_steps += chunk;
    double seconds = std::chrono::duration<double>(Clock::now() - window_start).count();
    point = {step,
             total,
             point.loss,
             point.accuracy,
             window_steps / std::max(seconds, 1e-9),
             window_steps * double(global_batch) / std::max(seconds, 1e-9)};
    point.eta_steps_per_s = eta_rate.after_chunk(step, Clock::now(), point.steps_per_s);
    if (options.tty) writer.post([&progress, point] { progress.tick(point); });
    if ((log_every > 0 && step % log_every == 0) || step == total) {
      point.loss = trainer->metrics().mean_loss();
      point.accuracy = has_accuracy(e) ? trainer->metrics().accuracy() : -1;
      if (options.stop_after_log) stop_after_log = options.stop_after_log(point);
      std::vector<std::pair<std::string, float>> scalars{
          {"loss", float(point.loss)}, {"examples_per_second", float(point.examples_per_s)}};
      if (point.accuracy >= 0) scalars.emplace_back("accuracy", float(point.accuracy));
      const int64_t skipped = trainer->optimizer().skipped_steps();
      writer.post([&, point, scalars = std::move(scalars), skipped, logged = step] {
        progress.log(point);
        events.add_scalars(logged, scalars);
        warn_skipped(options.out, skipped, summary.skipped_steps);
      });
      trainer->metrics().reset();
      window_start = Clock::now();
      window_steps = 0;
      if (!steady_start) {
        steady_start = window_start;
        summary.steady_from_step = step;
      }
    }
    if (checkpoint_every > 0 && step % checkpoint_every == 0 && step != total) checkpoint_now();
  }
  const auto training_end = Clock::now();
  if (steady_start && step > summary.steady_from_step)
    summary.steady_examples_per_s =
        double(step - summary.steady_from_step) * double(global_batch) /
        std::max(std::chrono::duration<double>(training_end - *steady_start).count(), 1e-9);
  writer.close();  // every line and event written, or the write's error thrown
  progress.finish();
  checkpoint_now();  // at the end, and when stopped: nothing trained is lost
  events.close();
  set_phase(RunPhase::done);
  double elapsed = std::chrono::duration<double>(Clock::now() - run_start).count();
  summary.last_step = step;
  summary.final_loss = point.loss;
  summary.final_accuracy = point.accuracy;
  summary.examples_per_s =
      double(step - summary.first_step) * double(global_batch) / std::max(elapsed, 1e-9);
  if (timeline) {
    timeline->write(timeline_path);
    summary.timeline = timeline_path;
  }
  if (!chief) {  // written to the temporary directory, which goes now
    summary.checkpoint.clear();
    summary.metrics_csv.clear();
    summary.events_file.clear();
    summary.timeline.clear();
  }
  return summary;
}

}  // namespace

RunSummary run_experiment(caf::actor_system& system, const proto::Experiment& e,
                          const RunOptions& options) {
  std::string doing = "starting the run";
  // The default strategy runs its replica on this thread; the replica groups set theirs.
  ScopedFlushDenormals flush(!e.train().keep_denormals());
  try {
    if (e.strategy().kind() == "parameter_server") return run_ps_experiment(system, e, options);
    return train_experiment(system, e, options, doing);
  } catch (const std::bad_alloc&) {
    // A bare std::bad_alloc names nothing; `troupe plan` prints what the run needs.
    throw failed_precondition("out of memory while " + doing +
                              " (troupe plan estimates the memory an experiment needs)");
  }
}

}  // namespace troupe
