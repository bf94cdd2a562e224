#include "core/data/auto_shard.hpp"

namespace troupe::data {
namespace {

// Rebuilds `node` with fn applied to each input (leaves untouched nodes shared).
template <class Fn>
NodePtr map_inputs(const NodePtr& node, Fn&& fn) {
  auto inputs = node->inputs();
  for (auto& in : inputs) in = fn(in);
  return node->with_inputs(std::move(inputs));
}

NodePtr shard_files(const NodePtr& node, int64_t w, int64_t i) {
  if (const auto* files = node->files()) {
    if (int64_t(files->size()) < w)
      throw not_found("FILE auto-sharding: source '" + node->name() + "' has " +
                      std::to_string(files->size()) + " file(s), fewer than the " +
                      std::to_string(w) + " workers");
    std::vector<std::string> mine;
    for (size_t k = size_t(i); k < files->size(); k += size_t(w)) mine.push_back((*files)[k]);
    return node->with_files(std::move(mine));
  }
  if (node->inputs().empty())
    throw not_found("FILE auto-sharding: source '" + node->name() +
                    "' is not a file reader, so files cannot be split across workers");
  return map_inputs(node, [&](const NodePtr& in) { return shard_files(in, w, i); });
}

NodePtr rebatch_to_legacy(const NodePtr& node, int64_t num_replicas) {
  if (node->inputs().empty()) return node;
  auto rebuilt =
      map_inputs(node, [&](const NodePtr& in) { return rebatch_to_legacy(in, num_replicas); });
  if (node->name() == "rebatch")
    return Dataset(rebuilt->inputs().at(0)).legacy_rebatch(num_replicas).node();
  return rebuilt;
}

NodePtr shard_data(const NodePtr& node, int64_t w, int64_t i) {
  if (node->name() == "prefetch")
    return map_inputs(node, [&](const NodePtr& in) { return shard_data(in, w, i); });
  return Dataset(node).shard(w, i).node();
}

NodePtr replace_hints(const NodePtr& node, int64_t w, int64_t i) {
  if (node->inputs().empty()) return node;
  auto rebuilt = map_inputs(node, [&](const NodePtr& in) { return replace_hints(in, w, i); });
  if (node->name() == "shard_hint") return Dataset(rebuilt->inputs().at(0)).shard(w, i).node();
  return rebuilt;
}

}  // namespace

AutoShardResult auto_shard_dataset(const Dataset& dataset, int64_t num_shards, int64_t index,
                                   int64_t num_replicas) {
  if (num_shards <= 0 || index < 0 || index >= num_shards)
    throw invalid_argument("auto_shard: worker index " + std::to_string(index) + " outside [0, " +
                           std::to_string(num_shards) + ")");
  AutoShardPolicy policy = dataset.auto_shard_policy();
  auto wrap = [&](NodePtr n) { return Dataset(std::move(n), policy); };
  if (policy == AutoShardPolicy::off || num_shards == 1)
    return {dataset, policy == AutoShardPolicy::auto_ ? AutoShardPolicy::file : policy, ""};
  const NodePtr& root = dataset.node();
  auto by_data = [&] {
    return wrap(shard_data(rebatch_to_legacy(root, num_replicas > 0 ? num_replicas : 1), num_shards,
                           index));
  };
  switch (policy) {
    case AutoShardPolicy::file:
      return {wrap(shard_files(root, num_shards, index)), AutoShardPolicy::file, ""};
    case AutoShardPolicy::data: return {by_data(), AutoShardPolicy::data, ""};
    case AutoShardPolicy::hint:
      return {wrap(replace_hints(root, num_shards, index)), AutoShardPolicy::hint, ""};
    case AutoShardPolicy::auto_:
      try {
        return {wrap(shard_files(root, num_shards, index)), AutoShardPolicy::file, ""};
      } catch (const Error& e) {
        if (e.code() != Code::not_found) throw;
        return {by_data(), AutoShardPolicy::data,
                std::string("AUTO auto-sharding fell back to DATA: ") + e.what() +
                    "; every worker will read and preprocess the whole dataset (turn auto-"
                    "sharding OFF or use distribute_datasets_from_function to avoid this)"};
      }
    case AutoShardPolicy::off: break;
  }
  return {dataset, policy, ""};
}

}  // namespace troupe::data
