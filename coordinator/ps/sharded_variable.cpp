#include "coordinator/ps/sharded_variable.hpp"

#include <cstring>

#include "core/status.hpp"

namespace troupe {
namespace {

std::vector<int64_t> index_values(const Tensor& t, const std::string& what) {
  if (!t.defined() || (t.dtype() != DType::int32 && t.dtype() != DType::int64))
    throw invalid_argument(what + " must be an int32 or int64 tensor, got " +
                           (t.defined() ? t.description() : std::string("none")));
  if (t.dtype() == DType::int64) return t.to_vector<int64_t>();
  auto v = t.to_vector<int32_t>();
  return {v.begin(), v.end()};
}

Tensor index_tensor(const std::vector<int64_t>& v) {
  return Tensor::from_vector<int64_t>({int64_t(v.size())}, v);
}

size_t row_bytes(const Tensor& t) {
  return size_t(t.shape().row_elements()) * dtype_size(t.dtype());
}

}  // namespace

ShardedVariable::ShardedVariable(std::shared_ptr<const PsClient> client, ShardLayout layout,
                                 std::vector<caf::actor> parts, std::vector<int64_t> tasks)
    : client_(std::move(client)),
      layout_(std::move(layout)),
      parts_(std::move(parts)),
      tasks_(std::move(tasks)) {}

ShardedVariable ShardedVariable::create(std::shared_ptr<const PsClient> client,
                                        const std::vector<caf::actor>& ps_tasks,
                                        PlacementPolicy& placement, const std::string& name,
                                        const Tensor& initial, int64_t num_shards) {
  if (!client) throw invalid_argument("sharded variable '" + name + "' needs a ps client");
  if (int64_t(ps_tasks.size()) != placement.num_tasks())
    throw invalid_argument("sharded variable '" + name + "': placement spans " +
                           std::to_string(placement.num_tasks()) + " ps tasks, " +
                           std::to_string(ps_tasks.size()) + " shard actors were given");
  if (!initial.defined()) throw invalid_argument("sharded variable '" + name + "' needs a value");
  ShardLayout layout = ShardLayout::split(name, initial.shape(), initial.dtype(), num_shards);
  std::vector<caf::actor> parts;
  std::vector<int64_t> tasks;
  const auto& offsets = layout.row_offsets();
  for (size_t i = 0; i < layout.num_shards(); ++i) {
    const ShardInfo& info = layout.shard(i);
    const int64_t task = placement.place({info.name, info.shape, layout.dtype()});
    ps_create_msg m{{info.name, name, initial.shape().dims(), info.offset},
                    initial.slice_rows(offsets[i], offsets[i + 1])};
    client->create(ps_tasks[size_t(task)], m);
    parts.push_back(ps_tasks[size_t(task)]);
    tasks.push_back(task);
  }
  return ShardedVariable(std::move(client), std::move(layout), std::move(parts), std::move(tasks));
}

Tensor ShardedVariable::read() const {
  std::vector<std::pair<caf::actor, ps_read_msg>> reads;
  for (size_t i = 0; i < parts_.size(); ++i)
    reads.push_back({parts_[i], ps_read_msg{layout_.shard(i).name}});
  auto values = client_->read_all(reads);
  Tensor out(dtype(), shape());
  char* dst = static_cast<char*>(out.raw_data());
  for (auto& v : values) {
    std::memcpy(dst, v.raw_data(), v.byte_size());
    dst += v.byte_size();
  }
  return out;
}

Tensor ShardedVariable::gather_rows(const std::vector<ShardRow>& at, Shape out_shape) const {
  // One request per shard with its rows; positions remember where each row goes.
  std::vector<std::vector<int64_t>> rows(parts_.size()), positions(parts_.size());
  for (size_t k = 0; k < at.size(); ++k) {
    rows[size_t(at[k].shard)].push_back(at[k].row);
    positions[size_t(at[k].shard)].push_back(int64_t(k));
  }
  std::vector<std::pair<caf::actor, ps_gather_msg>> gathers;
  std::vector<size_t> asked;
  for (size_t p = 0; p < parts_.size(); ++p) {
    if (rows[p].empty()) continue;
    gathers.push_back({parts_[p], ps_gather_msg{layout_.shard(p).name, index_tensor(rows[p])}});
    asked.push_back(p);
  }
  auto got = client_->gather_all(gathers);
  Tensor out(dtype(), std::move(out_shape));
  const size_t bytes = size_t(shape().row_elements()) * dtype_size(dtype());
  char* dst = static_cast<char*>(out.raw_data());
  for (size_t g = 0; g < got.size(); ++g) {
    const char* src = static_cast<const char*>(got[g].raw_data());
    const auto& pos = positions[asked[g]];
    for (size_t k = 0; k < pos.size(); ++k)
      std::memcpy(dst + size_t(pos[k]) * bytes, src + k * bytes, bytes);
  }
  return out;
}

Tensor ShardedVariable::row(int64_t index) const {
  const ShardRow at = locate_row(index, layout_.row_offsets());
  Shape row_shape(std::vector<int64_t>(shape().dims().begin() + 1, shape().dims().end()));
  return gather_rows({at}, row_shape);
}

Tensor ShardedVariable::slice(const SliceSpec& s) const {
  auto at = slice_rows(s, layout_.row_offsets());
  return gather_rows(at, shape().with_leading(int64_t(at.size())));
}

Tensor ShardedVariable::embedding_lookup(const Tensor& ids, PartitionStrategy strategy) const {
  const auto flat = index_values(ids, "embedding_lookup ids of '" + name() + "'");
  EmbeddingRouter router(layout_.row_counts(), strategy);
  std::vector<ShardRow> at;
  at.reserve(flat.size());
  for (int64_t id : flat) at.push_back(router.route(id));
  std::vector<int64_t> dims = ids.shape().dims();
  dims.insert(dims.end(), shape().dims().begin() + 1, shape().dims().end());
  return gather_rows(at, Shape(dims));
}

void ShardedVariable::write_whole(ShardWrite kind, const Tensor& x) {
  if (!x.defined() || x.dtype() != dtype() || x.shape() != shape())
    throw invalid_argument(std::string(shard_write_name(kind)) + " of sharded variable '" + name() +
                           "' needs a value of its layout " + std::string(dtype_name(dtype())) +
                           shape().to_string() + ", got " +
                           (x.defined() ? x.description() : std::string("none")));
  const auto& offsets = layout_.row_offsets();
  std::vector<std::pair<caf::actor, ps_write_msg>> writes;
  for (size_t i = 0; i < parts_.size(); ++i)
    writes.push_back({parts_[i], ps_write_msg{layout_.shard(i).name, uint8_t(kind), 0, Tensor(),
                                              x.slice_rows(offsets[i], offsets[i + 1])}});
  client_->write_all(writes);
}

void ShardedVariable::scatter(ShardWrite kind, const Tensor& indices, const Tensor& rows) {
  const auto global =
      index_values(indices, std::string(shard_write_name(kind)) + " indices of '" + name() + "'");
  if (!rows.defined() || rows.dtype() != dtype() ||
      rows.shape() != shape().with_leading(int64_t(global.size())))
    throw invalid_argument(std::string(shard_write_name(kind)) + " of sharded variable '" + name() +
                           "': " + std::to_string(global.size()) + " indices need rows " +
                           std::string(dtype_name(dtype())) +
                           shape().with_leading(int64_t(global.size())).to_string() + ", got " +
                           (rows.defined() ? rows.description() : std::string("none")));
  std::vector<std::vector<int64_t>> local(parts_.size()), picked(parts_.size());
  for (size_t k = 0; k < global.size(); ++k) {
    if (global[k] < 0)
      throw out_of_range(std::string(shard_write_name(kind)) + " of '" + name() + "': row " +
                         std::to_string(global[k]) + " is negative");
    const ShardRow at = locate_row(global[k], layout_.row_offsets());
    local[size_t(at.shard)].push_back(at.row);
    picked[size_t(at.shard)].push_back(int64_t(k));
  }
  const size_t bytes = row_bytes(rows);
  const char* src = static_cast<const char*>(rows.raw_data());
  std::vector<std::pair<caf::actor, ps_write_msg>> writes;
  for (size_t p = 0; p < parts_.size(); ++p) {
    if (local[p].empty()) continue;
    Tensor part_rows(dtype(), shape().with_leading(int64_t(local[p].size())));
    char* dst = static_cast<char*>(part_rows.raw_data());
    for (size_t k = 0; k < picked[p].size(); ++k)
      std::memcpy(dst + k * bytes, src + size_t(picked[p][k]) * bytes, bytes);
    writes.push_back({parts_[p], ps_write_msg{layout_.shard(p).name, uint8_t(kind), 0,
                                              index_tensor(local[p]), part_rows}});
  }
  client_->write_all(writes);
}

}  // namespace troupe
