#include "core/ps/embedding_partition.hpp"

#include <algorithm>

#include "core/ps/integer_math.hpp"
#include "core/status.hpp"

namespace troupe {
namespace {

std::string sizes_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

std::string_view partition_strategy_name(PartitionStrategy strategy) {
  return strategy == PartitionStrategy::div ? "div" : "mod";
}

PartitionStrategy parse_partition_strategy(std::string_view name) {
  if (name == "div") return PartitionStrategy::div;
  if (name == "mod") return PartitionStrategy::mod;
  throw invalid_argument("Unrecognized partition strategy: '" + std::string(name) +
                         "' (use \"div\" or \"mod\")");
}

EmbeddingRouter::EmbeddingRouter(std::vector<int64_t> rows_per_shard, PartitionStrategy strategy)
    : rows_(std::move(rows_per_shard)), strategy_(strategy) {
  if (rows_.empty()) throw invalid_argument("embedding_lookup needs at least one shard");
  for (int64_t r : rows_) total_ += r;
  if (strategy_ == PartitionStrategy::div) {
    const int64_t p = int64_t(rows_.size());
    std::vector<int64_t> expected(rows_.size(), total_ / p);
    for (int64_t i = 0; i < total_ % p; ++i) ++expected[size_t(i)];
    if (expected != rows_)
      throw invalid_argument("embedding_lookup with partition strategy \"div\" over " +
                             std::to_string(p) + " shards of " + std::to_string(total_) +
                             " rows needs shard sizes " + sizes_text(expected) + ", got " +
                             sizes_text(rows_));
  }
}

ShardRow EmbeddingRouter::route(int64_t id) const {
  if (id < 0 || id >= total_)
    throw out_of_range("embedding id " + std::to_string(id) + " is not in [0, " +
                       std::to_string(total_) + ")");
  const int64_t p = int64_t(rows_.size());
  ShardRow at;
  if (strategy_ == PartitionStrategy::mod) {
    at = {id % p, id / p};
    if (at.row >= rows_[size_t(at.shard)])
      throw out_of_range("embedding id " + std::to_string(id) + " maps to row " +
                         std::to_string(at.row) + " of shard " + std::to_string(at.shard) +
                         " (\"mod\"), which has only " + std::to_string(rows_[size_t(at.shard)]) +
                         " rows");
    return at;
  }
  const int64_t ipp = total_ / p, extras = total_ % p;
  if (ipp == 0) return {id, 0};  // fewer rows than shards: one row each, id == shard
  // p = max(id // (ipp + 1), (id - extras) // ipp), floor division (id - extras may be < 0).
  at.shard = std::max(floor_div(id, ipp + 1), floor_div(id - extras, ipp));
  at.row = at.shard < extras ? floor_mod(id, ipp + 1) : floor_mod(id - extras, ipp);
  return at;
}

EmbeddingRoute EmbeddingRouter::route_all(const std::vector<int64_t>& ids) const {
  EmbeddingRoute out;
  out.rows.resize(rows_.size());
  out.positions.resize(rows_.size());
  for (size_t k = 0; k < ids.size(); ++k) {
    const ShardRow at = route(ids[k]);
    out.rows[size_t(at.shard)].push_back(at.row);
    out.positions[size_t(at.shard)].push_back(int64_t(k));
  }
  return out;
}

}  // namespace troupe
