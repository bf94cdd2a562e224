#include "train/optimizer.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "coordinator/colocation.hpp"
#include "coordinator/context.hpp"
#include "coordinator/device_inventory.hpp"
#include "core/packing.hpp"
#include "train/gradient_products.hpp"

namespace troupe {

OptimizerKind parse_optimizer_kind(const std::string& text) {
  if (text == "sgd") return OptimizerKind::sgd;
  if (text == "momentum") return OptimizerKind::momentum;
  if (text == "adam") return OptimizerKind::adam;
  if (text == "adagrad") return OptimizerKind::adagrad;
  throw invalid_argument("unknown optimizer '" + text + "' (sgd, momentum, adam, adagrad)");
}

Optimizer::Optimizer(Strategy& strategy, OptimizerConfig config,
                     std::vector<DistributedVariable> vars)
    : strategy_(strategy),
      config_(config),
      vars_(std::move(vars)),
      iterations_(size_t(strategy.num_local_replicas()), 0),
      skipped_(iterations_.size(), 0) {
  for (auto& var : vars_) {
    std::vector<DistributedVariable> slots;
    for (auto& name : slot_names()) {
      double init = config_.kind == OptimizerKind::adagrad ? config_.initial_accumulator : 0.0;
      Tensor initial = Tensor::zeros(var.dtype(), var.shape());
      if (init != 0.0) Ops(*strategy_.kernels()).fill(initial, init);
      ColocateVariablesWith beside(var.name());  // the step runs where the variable lives
      slots.push_back(strategy_.create_variable(var.name() + "/" + name, initial));
    }
    slots_.push_back(std::move(slots));
  }
}

std::vector<std::string> Optimizer::slot_names() const {
  std::vector<std::string> names;
  for (auto name : troupe::slot_names(config_.kind)) names.emplace_back(name);
  return names;
}

DistributedVariable& Optimizer::slot(size_t var_index, const std::string& slot) {
  auto names = slot_names();
  for (size_t s = 0; s < names.size(); ++s)
    if (names[s] == slot) return slots_.at(var_index).at(s);
  throw invalid_argument("optimizer has no slot '" + slot + "'");
}

UpdateRule Optimizer::update_rule(int replica) const {
  UpdateRule rule = config_;
  rule.step = iterations_[size_t(replica)] + 1;
  return rule;
}

void Optimizer::apply_one(int replica, size_t var_index, const Gradient& g) {
  std::vector<VariableStorage*> slots;
  for (auto& slot : slots_[var_index]) slots.push_back(&slot.storage());
  // Dense gradients carry no indices: the storage applies the dense rule then.
  vars_[var_index].storage().apply_update(size_t(replica), update_rule(replica), slots, g.indices,
                                          g.values);
}

void Optimizer::apply_to_replica(int replica, const std::vector<Gradient>& reduced) {
  if (reduced.size() != vars_.size())
    throw invalid_argument("apply_gradients: " + std::to_string(reduced.size()) +
                           " gradients for " + std::to_string(vars_.size()) + " variables");
  for (size_t k = 0; k < vars_.size(); ++k) apply_one(replica, k, reduced[k]);
  ++iterations_.at(size_t(replica));
}

ApplyPath resolve_apply_path(ApplyPath path, Strategy& strategy) {
  if (path != ApplyPath::automatic) return path;
  // The all_reduce path pays where each replica sums its share in parallel (shared memory);
  // through any other transport the merge path measured the same or faster.
  const auto& ops = strategy.extended().cross_device_ops();
  const int n = strategy.num_local_replicas();
  return ops.all_reduce_transport(std::max(n, 2), true, int64_t(1) << 20, false) ==
                 Transport::shared_memory
             ? ApplyPath::all_reduce
             : ApplyPath::merge_call;
}

namespace {

// A copy of `t` with its first element NaN: a replica whose loss is not finite sends it into the
// all-reduce, so every replica sees a non-finite sum (rare: the copy costs nothing that matters).
Tensor poisoned(const Tensor& t, const std::string& device) {
  Tensor host = to_host(t).clone();
  if (host.dtype() == DType::float64)
    host.data<double>()[0] = std::numeric_limits<double>::quiet_NaN();
  else if (host.dtype() == DType::float32)
    host.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
  return to_device(host, device);
}

std::string replica_list(const std::vector<int>& replicas) {
  std::string s;
  for (int r : replicas) s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}

std::string non_finite_message(int64_t step, const std::string& replicas) {
  return "non-finite loss or gradients at training step " + std::to_string(step) + " on replica " +
         replicas +
         " (NaN or Inf, e.g. from a NaN input example or a diverging learning rate); the step was "
         "not applied (train.on_nan: stop; skip_step skips such steps instead)";
}

}  // namespace

bool Optimizer::decide(const std::vector<int>& bad_replicas,
                       const std::vector<int>& replicas_skipping, int64_t bad_elsewhere) {
  if (bad_replicas.empty() && bad_elsewhere == 0) return true;
  const int64_t step = iterations_.at(size_t(replicas_skipping.at(0))) +
                       skipped_.at(size_t(replicas_skipping.at(0))) + 1;
  if (bad_replicas.empty()) {
    // Every worker decides alike: this one skips or stops with the worker that had the NaN.
    if (on_non_finite_ == OnNonFinite::stop)
      throw aborted(
          "a replica of another worker had a non-finite loss or gradients at training "
          "step " +
          std::to_string(step) + " (train.on_nan: stop)");
    for (int r : replicas_skipping) ++skipped_.at(size_t(r));
    return false;
  }
  if (on_non_finite_ == OnNonFinite::stop) {
    // The replicas that were fine echo the failure (aborted), so the step's error leads with a
    // replica whose step was not finite.
    const int me = replicas_skipping.at(0);
    if (replicas_skipping.size() == 1 &&
        std::find(bad_replicas.begin(), bad_replicas.end(), me) == bad_replicas.end())
      throw aborted("replica " + replica_list(bad_replicas) +
                    " had a non-finite loss or gradients (train.on_nan: stop)");
    throw invalid_argument(non_finite_message(step, replica_list(bad_replicas)));
  }
  for (int r : replicas_skipping) ++skipped_.at(size_t(r));
  return false;
}

bool Optimizer::decide_reduced(int replica, bool mine) {
  const int64_t step = iterations_.at(size_t(replica)) + skipped_.at(size_t(replica)) + 1;
  if (on_non_finite_ == OnNonFinite::skip_step) {
    ++skipped_.at(size_t(replica));
    return false;
  }
  if (mine) throw invalid_argument(non_finite_message(step, std::to_string(replica)));
  // Only the replicas whose own values were not finite name themselves; the others echo (the
  // step's error leads with a non-echo). Were all finite, the sum overflowed: this says so.
  throw aborted("non-finite sum of the replicas' gradients at training step " +
                std::to_string(step) +
                " (train.on_nan: stop; this replica's own loss and gradients were finite)");
}

bool Optimizer::apply_gradients(ReplicaContext& ctx, const std::vector<Gradient>& grads,
                                ApplyPath path, bool loss_finite) {
  path = resolve_apply_path(path, strategy_);
  if (grads.size() != vars_.size())
    throw invalid_argument("apply_gradients: " + std::to_string(grads.size()) + " gradients for " +
                           std::to_string(vars_.size()) + " variables");
  const bool guard = on_non_finite_ != OnNonFinite::ignore && !grads.empty();
  bool any_sparse = false, any_product = false;
  for (auto& g : grads) {
    any_sparse = any_sparse || g.is_sparse();
    any_product = any_product || g.is_product();
  }
  const int replica = ctx.replica_id_in_sync_group();
  const int replicas = ctx.num_replicas_in_sync();
  // Kernel gradients as products (train/gradient_products.hpp) are summed as such only by the
  // all-reduce among several replicas; every other path takes values. Every replica decides
  // alike (a replica whose loss is not finite poisons its first gradient in the form it has).
  std::vector<Gradient> local = grads;
  const Ops ops(*strategy_.kernels());  // products exist on the CPU only
  if (any_product && (path == ApplyPath::merge_call || any_sparse || replicas == 1))
    form_products(ops, local);
  if (path == ApplyPath::merge_call || any_sparse)
    return apply_by_merge_call(ctx, local, guard, !guard || (loss_finite && all_finite(local)));
  if (guard && !loss_finite) {
    Tensor& first = local[0].is_product() ? local[0].lhs : local[0].values;
    first = poisoned(first, strategy_.extended().worker_devices().at(size_t(replica)));
  }
  std::vector<Tensor> reduced;
  if (replicas == 1)
    for (auto& g : local) reduced.push_back(g.values);
  else
    reduced = all_reduce_gradients(ctx, strategy_, ops, local);
  // A NaN or Inf in any replica's gradients is in the sum, which every replica holds alike: one
  // scan of it decides for all (scanning the local gradients too, or sending flags along with
  // them, measured slower in `troupe bench train`).
  if (guard && !all_finite(reduced)) {
    if (any_product) form_products(ops, local);
    return decide_reduced(replica, !loss_finite || !all_finite(local));
  }
  std::vector<Gradient> summed(grads.size());
  for (size_t k = 0; k < grads.size(); ++k) summed[k].values = reduced[k];
  apply_to_replica(replica, summed);
  return true;
}

bool Optimizer::apply_by_merge_call(ReplicaContext& ctx, const std::vector<Gradient>& grads,
                                    bool guard, bool finite) {
  // Flattened merge arguments: a dense gradient is one tensor, a row gradient two (indices, rows);
  // with the guard, last, a host scalar saying whether this replica's step was finite.
  std::vector<Tensor> args;
  for (auto& g : grads) {
    if (g.is_sparse()) args.push_back(g.indices);
    args.push_back(g.values);
  }
  if (guard) args.push_back(Tensor::from_scalar<int64_t>(finite ? 0 : 1));
  auto merge = [this, grads, guard](Strategy& strategy,
                                    const std::vector<PerReplica>& per_replica) {
    if (guard) {
      // The merge function runs once for all replicas: it sees every replica's flag.
      std::vector<int> bad, all;
      const auto& flags = per_replica.back().values();
      for (size_t r = 0; r < flags.size(); ++r) {
        all.push_back(int(r));
        if (to_host(flags[r]).scalar<int64_t>() != 0) bad.push_back(int(r));
      }
      // Across workers every worker must take the same decision (or the others would wait in
      // the gradients' all-reduce): the flags are summed over all of them first.
      int64_t bad_elsewhere = 0;
      if (strategy.num_workers() > 1)
        bad_elsewhere = strategy.reduce(ReduceOp::sum, per_replica.back()).scalar<int64_t>() -
                        int64_t(bad.size());
      if (!decide(bad, all, bad_elsewhere)) return std::vector<DistributedValues>{};
    }
    std::vector<std::pair<ValueArg, Destinations>> dense_pairs;
    std::vector<ValueArg> update_args(grads.size(), ValueArg(Tensor()));
    std::vector<std::vector<ValueArg>> sparse_args(grads.size());
    size_t pos = 0;
    for (size_t k = 0; k < grads.size(); ++k) {
      if (grads[k].is_sparse()) {  // IndexedSlices: gather every replica's rows
        sparse_args[k] = {concat_rows(per_replica[pos].values()),
                          concat_rows(per_replica[pos + 1].values())};
        pos += 2;
      } else {
        dense_pairs.push_back({per_replica[pos++], Destinations(vars_[k])});
      }
    }
    std::vector<Mirrored> reduced;
    if (!dense_pairs.empty())
      reduced = strategy.extended().batch_reduce_to(ReduceOp::sum, dense_pairs);
    size_t next_dense = 0;
    for (size_t k = 0; k < grads.size(); ++k) {
      const bool sparse = grads[k].is_sparse();
      std::vector<ValueArg> args =
          sparse ? sparse_args[k] : std::vector<ValueArg>{reduced[next_dense++]};
      strategy.extended().update(
          vars_[k],
          [this, k, sparse](Variable&, const std::vector<Tensor>& a) {
            Gradient g;
            if (sparse) {
              g.indices = a.at(0);
              g.values = a.at(1);
            } else
              g.values = a.at(0);
            apply_one(current_replica_id(), k, g);
            return Tensor();
          },
          args);
    }
    for (auto& it : iterations_) ++it;
    return std::vector<DistributedValues>{};
  };
  // One replica's merge function runs for all: whether it applied shows in this replica's count.
  const int replica = ctx.replica_id_in_sync_group();
  const int64_t before = iterations_.at(size_t(replica));
  ctx.merge_call(merge, std::move(args), "apply_gradients");
  return iterations_.at(size_t(replica)) != before;
}

}  // namespace troupe
