#include "experiment/ps_layout.hpp"

#include "core/ps/placement.hpp"
#include "core/ps/shard_layout.hpp"
#include "kernels/update_rule.hpp"
#include "train/optimizer.hpp"

namespace troupe::experiment {
namespace {

// The parts of `v` as ParameterServerStrategy creates them, advancing `placement`.
std::vector<PlannedPart> place(const PlannedVariable& v, const Partitioner& partitioner,
                               PlacementPolicy& placement) {
  const int64_t shards =
      shard_count_for(partitioner ? &partitioner : nullptr, v.shape, v.dtype, false, v.name);
  std::vector<PlannedPart> parts;
  if (shards <= 1) {
    const int64_t task = placement.place({v.name, v.shape, v.dtype});
    parts.push_back(
        {v.name, v.shape, std::vector<int64_t>(v.shape.rank(), 0), task, ps_device(task)});
    return parts;
  }
  ShardLayout layout = ShardLayout::split(v.name, v.shape, v.dtype, shards);
  for (const ShardInfo& s : layout.shards()) {
    const int64_t task = placement.place({s.name, s.shape, v.dtype});
    parts.push_back({s.name, s.shape, s.offset, task, ps_device(task)});
  }
  return parts;
}

}  // namespace

Partitioner make_experiment_partitioner(const proto::PartitionerSpec& p) {
  if (p.kind().empty()) return nullptr;
  if (p.kind() == "fixed") {
    FixedShardsPartitioner f(p.num_shards());
    return [f](const Shape& s, DType t) { return f(s, t); };
  }
  if (p.kind() == "min_size") {
    MinSizePartitioner f(p.min_shard_bytes(), p.max_shards());
    return [f](const Shape& s, DType t) { return f(s, t); };
  }
  if (p.kind() == "max_size") {
    MaxSizePartitioner f(p.max_shard_bytes(), p.max_shards());
    return [f](const Shape& s, DType t) { return f(s, t); };
  }
  throw invalid_argument("strategy.partitioner.kind: unknown partitioner '" + p.kind() +
                         "' (fixed, min_size, max_size)");
}

std::vector<PlannedVariable> plan_ps_variables(const proto::Experiment& e,
                                               std::vector<PlannedVariable> variables) {
  const auto& spec = e.strategy().parameter_server();
  Partitioner partitioner = make_experiment_partitioner(spec.partitioner());
  auto placement =
      make_placement(spec.placement().empty() ? "round_robin" : spec.placement(), spec.num_ps());
  for (auto& v : variables) v.parts = place(v, partitioner, *placement);
  const OptimizerKind kind =
      parse_optimizer_kind(e.optimizer().kind().empty() ? "sgd" : e.optimizer().kind());
  const size_t model_variables = variables.size();
  for (size_t i = 0; i < model_variables; ++i)
    for (auto slot : slot_names(kind)) {
      PlannedVariable s = variables[i];
      s.name = variables[i].name + "/" + std::string(slot);
      s.colocated_with = variables[i].name;
      // Each part beside the variable's part, on the same task.
      for (size_t k = 0; k < s.parts.size(); ++k)
        s.parts[k].name = s.parts.size() == 1 ? s.name : shard_name(s.name, k);
      variables.push_back(std::move(s));
    }
  return variables;
}

}  // namespace troupe::experiment
