#include "train/trainer.hpp"

#include <cmath>

#include "coordinator/context.hpp"
#include "train/gradient_products.hpp"

namespace troupe {
namespace {

DistributedVariable sum_on_read(Strategy& strategy, const std::string& name) {
  return strategy.create_variable(name, Tensor::zeros(DType::float64, Shape{}),
                                  {Sync::on_read, Aggregation::sum, /*trainable=*/false});
}

std::vector<DistributedVariable> create_parameters(Strategy& strategy, const Model& model) {
  std::vector<DistributedVariable> vars;
  for (auto& p : model.initial_parameters())
    vars.push_back(strategy.create_variable(p.name, p.value, {Sync::on_write}));
  return vars;
}

double read_scalar(const DistributedVariable& v) { return v.value().scalar<double>(); }

// Copies of `v` in this process; 0 where its values live elsewhere (then every record() goes
// straight to the variable).
size_t local_replicas(const DistributedVariable& v) {
  try {
    return v.components().size();
  } catch (const Error&) {
    return 0;
  }
}

int64_t rows_of(const ValueArg& value, int replicas) {
  int64_t rows = 0;
  for (int r = 0; r < replicas; ++r)
    rows += value.for_replica(size_t(r), size_t(replicas)).shape()[0];
  return rows;
}

}  // namespace

TrainMetrics::TrainMetrics(Strategy& strategy, const std::string& prefix)
    : loss_sum_(sum_on_read(strategy, prefix + "/loss_sum")),
      correct_(sum_on_read(strategy, prefix + "/correct")),
      count_(sum_on_read(strategy, prefix + "/count")),
      pending_(local_replicas(loss_sum_)) {}

void TrainMetrics::record(const LossStats& stats) {
  const int replica = current_replica_id();
  if (replica < 0 || size_t(replica) >= pending_.size()) {
    // Not a local replica's context: the variables' own rules apply (and name the problem).
    loss_sum_.assign_add(Tensor::from_scalar<double>(stats.loss_sum));
    correct_.assign_add(Tensor::from_scalar<double>(double(stats.correct)));
    count_.assign_add(Tensor::from_scalar<double>(double(stats.rows)));
    return;
  }
  Pending& p = pending_[size_t(replica)];
  p.loss_sum += stats.loss_sum;
  p.correct += double(stats.correct);
  p.count += double(stats.rows);
  p.any = true;
}

void TrainMetrics::flush() const {
  auto add = [](DistributedVariable v, size_t replica, double x) {  // a handle: same variable
    v.components().at(replica).assign_add(Tensor::from_scalar<double>(x));
  };
  for (size_t r = 0; r < pending_.size(); ++r) {
    if (!pending_[r].any) continue;
    add(loss_sum_, r, pending_[r].loss_sum);
    add(correct_, r, pending_[r].correct);
    add(count_, r, pending_[r].count);
    pending_[r] = Pending{};
  }
}

double TrainMetrics::loss_sum() const {
  flush();
  return read_scalar(loss_sum_);
}
double TrainMetrics::correct() const {
  flush();
  return read_scalar(correct_);
}
double TrainMetrics::count() const {
  flush();
  return read_scalar(count_);
}
double TrainMetrics::mean_loss() const {
  double n = count();
  return n > 0 ? loss_sum() / n : 0.0;
}
double TrainMetrics::accuracy() const {
  double n = count();
  return n > 0 ? correct() / n : 0.0;
}
void TrainMetrics::reset() {
  pending_.assign(pending_.size(), Pending{});
  for (auto* v : {&loss_sum_, &correct_, &count_})
    v->restore(Tensor::zeros(DType::float64, Shape{}));
}

// A replica that missed the step timeout may still run train_steps' task, which uses `this`.
Trainer::~Trainer() { strategy_.wait_for_replicas(); }

Trainer::Trainer(Strategy& strategy, std::shared_ptr<const Model> model, OptimizerConfig optimizer,
                 ApplyPath path)
    : strategy_(strategy),
      model_(std::move(model)),
      variables_(create_parameters(strategy, *model_)),
      optimizer_(strategy, optimizer, variables_),
      metrics_(strategy),
      path_(path),
      contexts_(std::make_shared<ReplicaDeviceContexts>(strategy.extended().worker_devices())) {}

std::vector<Tensor> Trainer::replica_parameters(int replica) const {
  std::vector<Tensor> params;
  params.reserve(variables_.size());
  for (auto& v : variables_) params.push_back(v.components().at(size_t(replica)).read());
  return params;
}

std::vector<Tensor> Trainer::replica_step(ReplicaContext& ctx, const Tensor& features,
                                          const Tensor& labels, int64_t global_batch, bool train) {
  const int replica = ctx.replica_id_in_sync_group();
  // A GPU replica computes on its GPU: the batch goes there (the parameters already are).
  const std::string& device = strategy_.extended().worker_devices().at(size_t(replica));
  Ops ops(*strategy_.kernels(), contexts_->context(replica));
  // Kernel gradients as their factors where the all-reduce sums those in place
  // (train/gradient_products.hpp); the result is the same bits either way.
  const GradientForm form =
      train && wants_kernel_products(strategy_,
                                     resolve_apply_path(path_, strategy_) == ApplyPath::all_reduce,
                                     device, features.dtype(), features.shape()[0], global_batch)
          ? GradientForm::kernel_products
          : GradientForm::values;
  ModelOutput out = model_->compute(ops, replica_parameters(replica), to_device(features, device),
                                    to_device(labels, device), global_batch, train, form);
  // A step not applied (skipped for a non-finite loss) is left out of the metrics too, so the
  // logged loss stays that of the steps that trained.
  const bool applied = !train || optimizer_.apply_gradients(ctx, out.grads, path_,
                                                            std::isfinite(out.stats.loss_sum));
  if (applied) metrics_.record(out.stats);
  return {Tensor::from_scalar<double>(out.stats.loss_sum),
          Tensor::from_scalar<double>(double(out.stats.correct)),
          Tensor::from_scalar<double>(double(out.stats.rows))};
}

double Trainer::train_step(const ValueArg& features, const ValueArg& labels) {
  return train_steps({features}, {labels}).at(0);
}

std::vector<double> Trainer::train_steps(const std::vector<ValueArg>& features,
                                         const std::vector<ValueArg>& labels) {
  if (features.size() != labels.size())
    throw invalid_argument("train_steps: " + std::to_string(features.size()) +
                           " feature batches but " + std::to_string(labels.size()) +
                           " label batches");
  const int replicas = strategy_.num_local_replicas();
  std::vector<int64_t> global_batches;
  std::vector<ValueArg> args;  // features 0, labels 0, features 1, ...
  for (size_t k = 0; k < features.size(); ++k) {
    global_batches.push_back(rows_of(features[k], replicas));
    // Across workers the global batch is every worker's rows (each worker asks alike).
    if (strategy_.num_workers() > 1) {
      const auto& devices = strategy_.extended().worker_devices();
      std::vector<Tensor> counts(devices.size(), Tensor::from_scalar<int64_t>(0));
      counts[0] = Tensor::from_scalar<int64_t>(global_batches.back());
      global_batches.back() =
          strategy_.reduce(ReduceOp::sum, PerReplica(counts, devices)).scalar<int64_t>();
    }
    args.push_back(features[k]);
    args.push_back(labels[k]);
  }
  // Each replica returns the loss sum of every batch it ran, in order.
  auto outputs = strategy_.run(
      // By value: after a step timeout a replica may still run this when train_steps returned.
      [this, global_batches](ReplicaContext& ctx, const std::vector<Tensor>& a) {
        std::vector<Tensor> loss_sums;
        for (size_t k = 0; k < global_batches.size(); ++k)
          loss_sums.push_back(
              replica_step(ctx, a.at(2 * k), a.at(2 * k + 1), global_batches[k]).at(0));
        return loss_sums;
      },
      args);
  std::vector<double> losses;
  for (size_t k = 0; k < global_batches.size(); ++k)
    losses.push_back(strategy_.reduce(ReduceOp::sum, outputs.at(k)).scalar<double>() /
                     double(global_batches[k]));
  return losses;
}

PerReplica Trainer::split_batch(const Tensor& global) const {
  const int64_t n = strategy_.num_local_replicas();
  const int64_t rows = global.shape()[0];
  std::vector<Tensor> parts;
  int64_t begin = 0;
  for (int64_t r = 0; r < n; ++r) {
    int64_t size = rows / n + (r < rows % n ? 1 : 0);
    parts.push_back(global.slice_rows(begin, begin + size));
    begin += size;
  }
  return PerReplica(std::move(parts), strategy_.extended().worker_devices());
}

}  // namespace troupe
