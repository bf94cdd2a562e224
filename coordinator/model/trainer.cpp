#include "coordinator/model/trainer.hpp"

#include "coordinator/context.hpp"

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
      count_(sum_on_read(strategy, prefix + "/count")) {}

void TrainMetrics::record(const LossStats& stats) {
  loss_sum_.assign_add(Tensor::from_scalar<double>(stats.loss_sum));
  correct_.assign_add(Tensor::from_scalar<double>(double(stats.correct)));
  count_.assign_add(Tensor::from_scalar<double>(double(stats.rows)));
}

double TrainMetrics::loss_sum() const { return read_scalar(loss_sum_); }
double TrainMetrics::correct() const { return read_scalar(correct_); }
double TrainMetrics::count() const { return read_scalar(count_); }
double TrainMetrics::mean_loss() const {
  double n = count();
  return n > 0 ? loss_sum() / n : 0.0;
}
double TrainMetrics::accuracy() const {
  double n = count();
  return n > 0 ? correct() / n : 0.0;
}
void TrainMetrics::reset() {
  for (auto* v : {&loss_sum_, &correct_, &count_})
    v->restore(Tensor::zeros(DType::float64, Shape{}));
}

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
  ModelOutput out = model_->compute(ops, replica_parameters(replica), to_device(features, device),
                                    to_device(labels, device), global_batch, train);
  metrics_.record(out.stats);
  if (train) optimizer_.apply_gradients(ctx, out.grads, path_);
  return {Tensor::from_scalar<double>(out.stats.loss_sum),
          Tensor::from_scalar<double>(double(out.stats.correct)),
          Tensor::from_scalar<double>(double(out.stats.rows))};
}

double Trainer::train_step(const ValueArg& features, const ValueArg& labels) {
  const int64_t global_batch = rows_of(features, strategy_.num_replicas_in_sync());
  auto outputs = strategy_.run(
      [this, global_batch](ReplicaContext& ctx, const std::vector<Tensor>& args) {
        return replica_step(ctx, args.at(0), args.at(1), global_batch);
      },
      {features, labels});
  return strategy_.reduce(ReduceOp::sum, outputs.at(0)).scalar<double>() / double(global_batch);
}

PerReplica Trainer::split_batch(const Tensor& global) const {
  const int64_t n = strategy_.num_replicas_in_sync();
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
