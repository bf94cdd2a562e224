// The parameter_server keys of an experiment's strategy section (issue 12):
//   strategy: {kind: parameter_server, num_ps: 2, workers: 2,
//              partitioner: {kind: fixed, num_shards: 2}, placement: round_robin,
//              mode: sync, replicas_to_aggregate: 2, replication: 1}
#include "experiment/experiment_sections.hpp"

namespace troupe::experiment {
namespace {

constexpr const char* kPsKeys[] = {"num_ps",
                                   "workers",
                                   "partitioner",
                                   "placement",
                                   "mode",
                                   "replicas_to_aggregate",
                                   "total_num_replicas",
                                   "replication"};

void read_partitioner(const Field& field, SourceMap& source, proto::PartitionerSpec* out) {
  MapFields p(field, source,
              {"kind", "num_shards", "min_shard_bytes", "max_shard_bytes", "max_shards"});
  out->set_kind(read_choice(p.require("kind"), source, {"fixed", "min_size", "max_size"}));
  auto refuse = [&](std::initializer_list<const char*> keys) {
    for (const char* key : keys)
      if (auto f = p.get(key))
        throw source.error(f->path, "not used by partitioner kind " + out->kind());
  };
  if (out->kind() == "fixed") {
    refuse({"min_shard_bytes", "max_shard_bytes", "max_shards"});
    out->set_num_shards(read_integer(p.require("num_shards"), source, 1));
  } else if (out->kind() == "min_size") {
    refuse({"num_shards", "max_shard_bytes"});
    out->set_min_shard_bytes(256 << 10);
    if (auto f = p.get("min_shard_bytes")) out->set_min_shard_bytes(read_integer(*f, source, 1));
    out->set_max_shards(1);
    if (auto f = p.get("max_shards")) out->set_max_shards(read_integer(*f, source, 1));
  } else {
    refuse({"num_shards", "min_shard_bytes"});
    out->set_max_shard_bytes(read_integer(p.require("max_shard_bytes"), source, 1));
    if (auto f = p.get("max_shards")) out->set_max_shards(read_integer(*f, source, 0));
  }
}

}  // namespace

void read_parameter_server(const MapFields& strategy, SourceMap& source, proto::StrategySpec* out) {
  if (out->kind() != "parameter_server") {
    for (const char* key : kPsKeys)
      if (auto f = strategy.get(key))
        throw source.error(f->path, "only the parameter_server strategy has " + std::string(key) +
                                        " (strategy.kind is " + out->kind() + ")");
    return;
  }
  auto* ps = out->mutable_parameter_server();
  ps->set_num_ps(read_integer(strategy.require("num_ps"), source, 1));
  ps->set_workers(read_integer(strategy.require("workers"), source, 1));
  if (auto f = strategy.get("partitioner")) read_partitioner(*f, source, ps->mutable_partitioner());
  ps->set_placement("round_robin");
  if (auto f = strategy.get("placement"))
    ps->set_placement(read_choice(*f, source, {"round_robin", "greedy"}));
  ps->set_mode("async");
  if (auto f = strategy.get("mode")) ps->set_mode(read_choice(*f, source, {"async", "sync"}));
  for (const char* key : {"replicas_to_aggregate", "total_num_replicas"}) {
    auto f = strategy.get(key);
    if (f && ps->mode() != "sync")
      throw source.error(f->path,
                         "applies to mode sync only (strategy.mode is " + ps->mode() + ")");
  }
  if (ps->mode() == "sync") {
    ps->set_replicas_to_aggregate(ps->workers());
    if (auto f = strategy.get("replicas_to_aggregate"))
      ps->set_replicas_to_aggregate(read_integer(*f, source, 1));
    ps->set_total_num_replicas(ps->replicas_to_aggregate());
    if (auto f = strategy.get("total_num_replicas")) {
      ps->set_total_num_replicas(read_integer(*f, source, 1));
      if (ps->total_num_replicas() > ps->workers())
        throw source.error(
            f->path, "more replicas than workers: " + std::to_string(ps->total_num_replicas()) +
                         " > " + std::to_string(ps->workers()) + " (strategy.workers)");
    }
  }
  ps->set_replication(1);
  if (auto f = strategy.get("replication")) {
    ps->set_replication(read_integer(*f, source, 1));
    if (ps->replication() > 2)
      throw source.error(f->path, "1 (no backup) or 2 (a backup of every ps shard), got " +
                                      std::to_string(ps->replication()));
    if (ps->replication() > ps->num_ps())
      throw source.error(f->path, "replication " + std::to_string(ps->replication()) +
                                      " needs at least as many ps tasks, num_ps is " +
                                      std::to_string(ps->num_ps()));
  }
  if (auto f = strategy.get("devices"))
    throw source.error(f->path,
                       "the parameter_server strategy's coordinator runs on CPU:0; variables "
                       "live on the ps tasks (remove devices)");
}

}  // namespace troupe::experiment
