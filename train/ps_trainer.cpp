#include "train/ps_trainer.hpp"

#include <cmath>

#include "core/status.hpp"

namespace troupe {
namespace {

std::vector<DistributedVariable> create_variables(ParameterServerStrategy& strategy,
                                                  const Model& model) {
  Strategy::Scope scope(strategy);
  std::vector<DistributedVariable> vars;
  for (auto& p : model.initial_parameters())
    vars.push_back(strategy.create_variable(p.name, p.value));
  return vars;
}

Optimizer create_optimizer(ParameterServerStrategy& strategy, OptimizerConfig config,
                           std::vector<DistributedVariable> vars) {
  Strategy::Scope scope(strategy);  // slots are created beside their variables
  return Optimizer(strategy, config, std::move(vars));
}

void check_mode(const PsTrainingOptions& o) {
  if (o.mode != PsTrainingMode::sync && (o.replicas_to_aggregate != 0 || o.total_num_replicas != 0))
    throw invalid_argument(
        "replicas_to_aggregate and total_num_replicas apply to sync training only (mode is "
        "async)");
}

SyncReplicasOptions sync_options(const PsTrainingOptions& o, int64_t num_workers) {
  SyncReplicasOptions s;
  s.replicas_to_aggregate = o.replicas_to_aggregate != 0 ? o.replicas_to_aggregate : num_workers;
  s.total_num_replicas = o.total_num_replicas;
  return s;
}

std::unique_ptr<SyncReplicas> make_sync(ParameterServerStrategy& strategy,
                                        const ClusterCoordinator& coordinator,
                                        const PsTrainingOptions& o) {
  check_mode(o);
  if (o.mode != PsTrainingMode::sync) return nullptr;
  return std::make_unique<SyncReplicas>(
      strategy.system(), sync_options(o, coordinator.num_workers()), strategy.kernels());
}

int64_t bytes_of(const Tensor& t) { return t.defined() ? int64_t(t.byte_size()) : 0; }

int64_t bytes_of(const std::vector<Tensor>& tensors) {
  int64_t bytes = 0;
  for (const auto& t : tensors) bytes += bytes_of(t);
  return bytes;
}

int64_t bytes_of(const std::vector<Gradient>& grads) {
  int64_t bytes = 0;
  for (const auto& g : grads) bytes += bytes_of(g.values) + bytes_of(g.indices);
  return bytes;
}

}  // namespace

const char* ps_step_part_name(PsStepPart part) {
  switch (part) {
    case PsStepPart::step: return "step";
    case PsStepPart::input: return "input";
    case PsStepPart::token: return "token";
    case PsStepPart::pull: return "pull";
    case PsStepPart::push: return "push";
    case PsStepPart::offer: return "offer";
  }
  return "unknown";
}

PsTrainingMode parse_ps_training_mode(const std::string& text) {
  if (text == "async") return PsTrainingMode::async;
  if (text == "sync") return PsTrainingMode::sync;
  throw invalid_argument("unknown parameter-server training mode '" + text + "' (async, sync)");
}

PsTrainer::PsTrainer(ParameterServerStrategy& strategy, ClusterCoordinator& coordinator,
                     std::shared_ptr<const Model> model, OptimizerConfig optimizer,
                     PsTrainingOptions options)
    : strategy_(strategy),
      coordinator_(&coordinator),
      model_(std::move(model)),
      options_(std::move(options)),
      variables_(create_variables(strategy, *model_)),
      optimizer_(create_optimizer(strategy, optimizer, variables_)),
      sync_(make_sync(strategy, coordinator, options_)) {
  if (sync_) {
    // Remote workers reach the accumulator through the closures they are sent; a worker that is
    // lost may take tokens with it, which the accumulator gives again.
    coordinator.set_service(sync_->actor());
    coordinator.on_worker_lost([accumulator = sync_->actor()](int, int64_t closures) {
      SyncReplicas::replace_lost_tokens(accumulator, closures);
    });
  }
  coordinator.register_step(
      options_.step_name,
      [this](StepContext& ctx, const std::vector<Tensor>& args) { return run_step(ctx, args); });
}

PsTrainer::PsTrainer(ParameterServerStrategy& strategy, StepHost& host,
                     std::shared_ptr<const Model> model, OptimizerConfig optimizer,
                     PsTrainingOptions options)
    : strategy_(strategy),
      coordinator_(nullptr),
      model_(std::move(model)),
      options_(std::move(options)),
      variables_(create_variables(strategy, *model_)),
      optimizer_(create_optimizer(strategy, optimizer, variables_)) {
  check_mode(options_);
  if (options_.mode == PsTrainingMode::sync && options_.replicas_to_aggregate == 0 &&
      options_.num_workers < 1)
    throw invalid_argument(
        "sync training in a worker process needs replicas_to_aggregate or num_workers");
  host.register_step(options_.step_name, [this](StepContext& ctx, const std::vector<Tensor>& args) {
    return run_step(ctx, args);
  });
}

const SyncReplicas* PsTrainer::sync_for(const StepContext& ctx) {
  if (options_.mode != PsTrainingMode::sync) return nullptr;
  if (sync_) return sync_.get();
  // A worker process: the coordinator's accumulator, known once a closure brings it. The host
  // runs one step at a time, so this is not raced.
  if (!remote_sync_ || remote_sync_->actor() != ctx.service()) {
    if (!ctx.service())
      throw failed_precondition("step '" + options_.step_name + "' on worker " +
                                std::to_string(ctx.worker()) +
                                " trains in sync mode, but the coordinator sent no accumulator");
    remote_sync_ = std::make_unique<SyncReplicas>(strategy_.system(), ctx.service(),
                                                  sync_options(options_, options_.num_workers));
  }
  return remote_sync_.get();
}

RemoteValue PsTrainer::schedule_step(const PerWorkerDataset& data) {
  if (!coordinator_)
    throw failed_precondition("a worker process's PsTrainer runs steps; the coordinator schedules");
  // The dataset, and the update count the run started from (a worker process numbers its
  // updates from it).
  return coordinator_->schedule(options_.step_name,
                                {Tensor::from_vector<int64_t>({1}, {data.id()}),
                                 Tensor::from_scalar<int64_t>(update_base_.load())});
}

std::vector<Tensor> PsTrainer::pull() const {
  std::vector<Tensor> params;
  for (auto& v : variables_) params.push_back(v.storage().read(0));
  return params;
}

std::vector<Tensor> PsTrainer::parameters() const { return pull(); }

void PsTrainer::apply(const std::vector<Gradient>& grads, int64_t update) {
  UpdateRule rule = optimizer_.config();
  // Adam's bias correction counts applied updates. A worker process cannot see the others'
  // count: it uses `update`, the update's number in schedule order (async: the run's first
  // update count + the closure's step id, the same on a retry; sync: the global step + 1).
  const int64_t applied = updates_.fetch_add(1) + 1;
  rule.step = coordinator_ ? applied : update;
  auto names = optimizer_.slot_names();
  for (size_t k = 0; k < variables_.size(); ++k) {
    std::vector<VariableStorage*> slots;
    for (auto& name : names) slots.push_back(&optimizer_.slot(k, name).storage());
    variables_[k].storage().apply_update(0, rule, slots, grads[k].indices, grads[k].values);
  }
}

PsTraffic PsTrainer::traffic() const {
  PsTraffic t;
  t.steps = steps_.load();
  t.bytes_pulled = bytes_pulled_.load();
  t.bytes_pushed = bytes_pushed_.load();
  t.parameter_wait_seconds = double(parameter_wait_ns_.load()) * 1e-9;
  return t;
}

void PsTrainer::record(int worker, PsStepPart part, std::chrono::steady_clock::time_point begin,
                       int64_t bytes) {
  const auto end = std::chrono::steady_clock::now();
  if (part == PsStepPart::pull || part == PsStepPart::token)
    parameter_wait_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(end - begin).count();
  if (part == PsStepPart::pull) bytes_pulled_ += bytes;
  if (part == PsStepPart::push || part == PsStepPart::offer) bytes_pushed_ += bytes;
  if (part == PsStepPart::step) ++steps_;
  if (observer_) observer_(worker, part, begin, end, bytes);
}

std::vector<Tensor> PsTrainer::run_step(StepContext& ctx, const std::vector<Tensor>& args) {
  using Clock = std::chrono::steady_clock;
  const auto step_begin = Clock::now();
  const int worker = ctx.worker();
  if (args.size() != 2 || args[0].dtype() != DType::int64 || args[0].num_elements() != 1 ||
      args[1].dtype() != DType::int64 || args[1].num_elements() != 1)
    throw invalid_argument("step '" + options_.step_name +
                           "' takes a per-worker dataset id and the run's first update count");
  const int64_t update_base = args[1].scalar<int64_t>();
  auto begin = Clock::now();
  std::vector<Tensor> batch = ctx.next(args[0].to_vector<int64_t>()[0]);
  record(worker, PsStepPart::input, begin, 0);
  if (batch.size() != 2)
    throw invalid_argument("step '" + options_.step_name +
                           "' needs dataset elements {features, labels}, got " +
                           std::to_string(batch.size()) + " tensors");
  const int64_t rows = batch[0].shape()[0];
  int64_t local_step = 0;
  const SyncReplicas* sync = sync_for(ctx);
  if (sync) {
    begin = Clock::now();
    local_step = sync->take_token();
    record(worker, PsStepPart::token, begin, 0);
  }
  Ops ops(*strategy_.kernels());
  begin = Clock::now();
  std::vector<Tensor> params = pull();
  record(worker, PsStepPart::pull, begin, bytes_of(params));
  ModelOutput out = model_->compute(ops, params, batch[0], batch[1], rows);
  // TerminateOnNaN: a non-finite loss stops the training (the coordinator raises it on join)
  // before any gradient of it reaches the shards.
  if (!std::isfinite(out.stats.loss_sum))
    throw failed_precondition("step " + std::to_string(ctx.step_id()) + " on worker " +
                              std::to_string(ctx.worker()) + ": the loss is " +
                              (std::isnan(out.stats.loss_sum) ? "NaN" : "infinite") +
                              "; nothing was applied");
  if (!sync) {
    begin = Clock::now();
    apply(out.grads, update_base + int64_t(ctx.step_id()));
    record(worker, PsStepPart::push, begin, bytes_of(out.grads));
  } else {
    std::vector<SyncGradient> grads;
    for (auto& g : out.grads) grads.push_back({g.values, g.indices});
    begin = Clock::now();
    SyncOffer offer = sync->offer(local_step, std::move(grads));
    record(worker, PsStepPart::offer, begin, bytes_of(out.grads));
    if (offer.apply) {
      std::vector<Gradient> mean;
      for (auto& g : offer.mean) mean.push_back({g.values, g.indices});
      begin = Clock::now();
      apply(mean, offer.global_step + 1);
      sync->applied(offer.global_step);
      record(worker, PsStepPart::push, begin, bytes_of(mean));
    }
  }
  record(worker, PsStepPart::step, step_begin, 0);
  return {Tensor::from_scalar<double>(out.stats.loss_sum),
          Tensor::from_scalar<double>(double(out.stats.rows))};
}

}  // namespace troupe
