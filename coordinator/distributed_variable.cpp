#include "coordinator/distributed_variable.hpp"

#include <cstring>

#include "coordinator/context.hpp"
#include "coordinator/strategy.hpp"
#include "coordinator/tensor_reductions.hpp"

namespace troupe {
namespace {

Sync validated_sync(Sync sync) {
  if (sync == Sync::none)
    throw invalid_argument(
        "synchronization NONE is not supported for variables created under a "
        "distribution strategy; use AUTO, ON_WRITE or ON_READ");
  return sync == Sync::automatic ? Sync::on_write : sync;
}

/// Rows of every replica's scatter concatenated (the sum of IndexedSlices, spec §2.12).
Tensor concat_rows(const std::vector<Tensor>& parts) {
  int64_t rows = 0;
  for (auto& p : parts) rows += p.shape().rank() ? p.shape()[0] : 1;
  Shape shape = parts[0].shape().rank() ? parts[0].shape().with_leading(rows) : Shape{rows};
  Tensor out(parts[0].dtype(), shape);
  size_t offset = 0;
  for (auto& p : parts) {
    std::memcpy(static_cast<char*>(out.raw_data()) + offset, p.raw_data(), p.byte_size());
    offset += p.byte_size();
  }
  return out;
}

}  // namespace

DistributedVariable::DistributedVariable(Strategy& strategy, std::vector<Variable> components,
                                         Sync sync, Aggregation aggregation)
    : state_(std::make_shared<State>(
          State{&strategy, std::move(components), validated_sync(sync), aggregation})) {
  if (state_->components.empty()) throw invalid_argument("a distributed variable needs components");
  if (aggregation == Aggregation::mean && !is_floating(dtype()))
    throw invalid_argument("variable '" + name() + "': MEAN aggregation is not supported for " +
                           std::string(dtype_name(dtype())) + " (non-floating) variables");
}

const std::string& DistributedVariable::name() const { return state_->components[0].name(); }

std::vector<std::string> DistributedVariable::devices() const {
  std::vector<std::string> d;
  for (auto& c : state_->components) d.push_back(c.device());
  return d;
}

DistributedValues DistributedVariable::values() const {
  std::vector<Tensor> v;
  for (auto& c : state_->components) v.push_back(c.read());
  if (is_mirrored()) return Mirrored(std::move(v), devices());
  return PerReplica(std::move(v), devices());
}

Tensor DistributedVariable::value() const {
  int id = current_replica_id();
  if (id >= 0) return state_->components.at(size_t(id)).read();
  if (is_mirrored()) return state_->components[0].read();
  switch (state_->aggregation) {
    case Aggregation::only_first_replica: return state_->components[0].read();
    case Aggregation::none:
      throw invalid_argument("variable '" + name() +
                             "' (ON_READ, aggregation NONE) can not be "
                             "read in cross-replica context: there is no way to combine replicas");
    case Aggregation::sum:
    case Aggregation::mean: break;
  }
  auto& ext = state_->strategy->extended();
  return ext.reduce_to(reduce_op_for(state_->aggregation), values(), ext.host_device()).primary();
}

void DistributedVariable::assign(const Tensor& x) { write(Write::assign, {x}); }
void DistributedVariable::assign_add(const Tensor& x) { write(Write::add, {x}); }
void DistributedVariable::assign_sub(const Tensor& x) { write(Write::sub, {x}); }
void DistributedVariable::scatter_update(const Tensor& i, const Tensor& r) {
  write(Write::scatter_update, {i, r});
}
void DistributedVariable::scatter_add(const Tensor& i, const Tensor& r) {
  write(Write::scatter_add, {i, r});
}
void DistributedVariable::scatter_sub(const Tensor& i, const Tensor& r) {
  write(Write::scatter_sub, {i, r});
}

void DistributedVariable::assign(const DistributedValues& x) {
  if (get_replica_context())
    throw invalid_argument("assign of variable '" + name() +
                           "' in replica context: a distributed "
                           "value (" +
                           x.description() +
                           ") can not be assigned; pass this "
                           "replica's tensor");
  if (!x.is_mirrored())
    throw invalid_argument("cross-replica assign of variable '" + name() +
                           "' accepts one tensor "
                           "or a Mirrored value, got " +
                           x.description());
  auto& comps = state_->components;
  if (x.size() != comps.size())
    throw invalid_argument("assign of variable '" + name() + "': " + std::to_string(x.size()) +
                           " values for " + std::to_string(comps.size()) + " components");
  for (size_t i = 0; i < comps.size(); ++i) comps[i].assign(x.at(i));
}

void DistributedVariable::apply(Variable& c, Write kind, const std::vector<Tensor>& a) const {
  switch (kind) {
    case Write::assign: c.assign(a[0]); return;
    case Write::add: c.assign_add(a[0]); return;
    case Write::sub: c.assign_sub(a[0]); return;
    case Write::scatter_update: c.scatter_update(a[0], a[1]); return;
    case Write::scatter_add: c.scatter_add(a[0], a[1]); return;
    case Write::scatter_sub: c.scatter_sub(a[0], a[1]); return;
  }
}

void DistributedVariable::write(Write kind, const std::vector<Tensor>& args) {
  if (get_replica_context()) return write_replica(kind, args);
  int id = this_thread_context().update_replica_id;
  if (id >= 0) return apply(state_->components.at(size_t(id)), kind, args);  // R-UPD-3
  write_cross_replica(kind, args);
}

void DistributedVariable::write_replica(Write kind, const std::vector<Tensor>& args) {
  ReplicaContext& ctx = *get_replica_context();
  Variable& local = state_->components.at(size_t(ctx.replica_id_in_sync_group()));
  const Aggregation agg = state_->aggregation;
  // ON_READ never aggregates on write; ON_WRITE with NONE changes only this replica's copy.
  if (!is_mirrored() || agg == Aggregation::none) return apply(local, kind, args);
  bool nonlinear = kind == Write::scatter_update;
  if (nonlinear && agg != Aggregation::only_first_replica)
    throw unimplemented("scatter_update of MirroredVariable '" + name() + "' with aggregation " +
                        std::string(aggregation_name(agg)) +
                        " is not supported (only NONE and ONLY_FIRST_REPLICA)");
  DistributedVariable self = *this;
  ctx.merge_call(
      [self, kind, agg](Strategy& s, const std::vector<PerReplica>& merged) mutable {
        std::vector<Tensor> aggregated;
        bool scatter = kind == Write::scatter_add || kind == Write::scatter_sub ||
                       kind == Write::scatter_update;
        if (agg == Aggregation::only_first_replica) {
          for (auto& m : merged) aggregated.push_back(m.primary());
        } else if (scatter) {
          // SUM of sparse updates concatenates them; MEAN also divides the rows (spec §2.12).
          Tensor rows = concat_rows(merged[1].values());
          if (agg == Aggregation::mean) {
            Ops ops(*s.kernels());
            rows = divided(ops, rows, int64_t(merged[1].size()));
          }
          aggregated = {concat_rows(merged[0].values()), rows};
        } else {
          auto& ext = s.extended();
          aggregated.push_back(
              ext.reduce_to(reduce_op_for(agg), merged[0], Destinations(self)).primary());
        }
        self.write_cross_replica(kind, aggregated);
        return std::vector<DistributedValues>{};
      },
      args, "write/" + name());
}

void DistributedVariable::write_cross_replica(Write kind, const std::vector<Tensor>& args) {
  auto& comps = state_->components;
  if (!is_mirrored()) {
    const bool sum = state_->aggregation == Aggregation::sum;
    if (sum && (kind == Write::add || kind == Write::sub))
      throw invalid_argument("SyncOnReadVariable '" + name() +
                             "' does not support assign_add/"
                             "assign_sub in cross-replica context when aggregation is SUM");
    if (kind == Write::assign && sum) {
      // Each copy gets x / N so that the SUM read returns what was assigned (upstream rule).
      Ops ops(*state_->strategy->kernels());
      Tensor share = divided(ops, args[0], int64_t(comps.size()));
      for (auto& c : comps) c.assign(share);
      return;
    }
    for (auto& c : comps) apply(c, kind, args);
    return;
  }
  std::vector<ValueArg> update_args(args.begin(), args.end());
  state_->strategy->extended().update(
      *this,
      [this, kind](Variable& c, const std::vector<Tensor>& a) {
        apply(c, kind, a);
        return Tensor();
      },
      update_args);
}

Tensor DistributedVariable::save_value() const {
  if (is_mirrored() || state_->aggregation == Aggregation::none)
    return state_->components[0].read();
  ThreadContext saved = this_thread_context();
  // Read as cross-replica code would, whatever context the caller is in.
  this_thread_context() = ThreadContext{state_->strategy, 0, nullptr, -1};
  try {
    Tensor v = value();
    this_thread_context() = saved;
    return v;
  } catch (...) {
    this_thread_context() = saved;
    throw;
  }
}

void DistributedVariable::restore(const Tensor& saved) {
  auto& comps = state_->components;
  Tensor value = saved;
  if (!is_mirrored() && state_->aggregation == Aggregation::sum) {
    Ops ops(*state_->strategy->kernels());
    value = divided(ops, saved, int64_t(comps.size()));
  }
  for (auto& c : comps) c.assign(value);
}

}  // namespace troupe
