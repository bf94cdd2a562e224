#include "coordinator/ps/sharded_variable.hpp"

#include <algorithm>
#include <cstring>

#include "actors/ps_shard.hpp"
#include "coordinator/ps/step_id_scope.hpp"
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

// Copies `rows` rows of `src` from `src_row` into `dst` at `dst_row` (same row layout).
void copy_rows(const Tensor& src, int64_t src_row, Tensor& dst, int64_t dst_row, int64_t rows) {
  const size_t bytes = row_bytes(src);
  std::memcpy(static_cast<char*>(dst.raw_data()) + size_t(dst_row) * bytes,
              static_cast<const char*>(src.raw_data()) + size_t(src_row) * bytes,
              size_t(rows) * bytes);
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
                                        const Tensor& initial, int64_t num_shards,
                                        bool create_parts) {
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
    if (create_parts) client->create(ps_tasks[size_t(task)], m);
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
  const size_t bytes = size_t(shape().row_elements()) * dtype_size(dtype());
  auto got = client_->gather_all(gathers, bytes);
  Tensor out(dtype(), std::move(out_shape));
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

std::vector<ShardedVariable::PartRows> ShardedVariable::route_rows(const char* op,
                                                                   const Tensor& indices,
                                                                   const Tensor& rows) const {
  const auto global = index_values(indices, std::string(op) + " indices of '" + name() + "'");
  if (!rows.defined() || rows.dtype() != dtype() ||
      rows.shape() != shape().with_leading(int64_t(global.size())))
    throw invalid_argument(std::string(op) + " of sharded variable '" + name() +
                           "': " + std::to_string(global.size()) + " indices need rows " +
                           std::string(dtype_name(dtype())) +
                           shape().with_leading(int64_t(global.size())).to_string() + ", got " +
                           (rows.defined() ? rows.description() : std::string("none")));
  std::vector<std::vector<int64_t>> local(parts_.size()), picked(parts_.size());
  for (size_t k = 0; k < global.size(); ++k) {
    if (global[k] < 0)
      throw out_of_range(std::string(op) + " of '" + name() + "': row " +
                         std::to_string(global[k]) + " is negative");
    const ShardRow at = locate_row(global[k], layout_.row_offsets());
    local[size_t(at.shard)].push_back(at.row);
    picked[size_t(at.shard)].push_back(int64_t(k));
  }
  const size_t bytes = row_bytes(rows);
  const char* src = static_cast<const char*>(rows.raw_data());
  std::vector<PartRows> out;
  for (size_t p = 0; p < parts_.size(); ++p) {
    if (local[p].empty()) continue;
    Tensor part_rows(dtype(), shape().with_leading(int64_t(local[p].size())));
    char* dst = static_cast<char*>(part_rows.raw_data());
    for (size_t k = 0; k < picked[p].size(); ++k)
      std::memcpy(dst + k * bytes, src + size_t(picked[p][k]) * bytes, bytes);
    out.push_back({p, index_tensor(local[p]), part_rows});
  }
  return out;
}

void ShardedVariable::scatter(ShardWrite kind, const Tensor& indices, const Tensor& rows) {
  std::vector<std::pair<caf::actor, ps_write_msg>> writes;
  for (auto& r : route_rows(std::string(shard_write_name(kind)).c_str(), indices, rows))
    writes.push_back({parts_[r.part], ps_write_msg{layout_.shard(r.part).name, uint8_t(kind), 0,
                                                   r.indices, r.rows}});
  client_->write_all(writes);
}

ShardedVariable ShardedVariable::create_colocated(std::shared_ptr<const PsClient> client,
                                                  const ShardedVariable& with,
                                                  const std::string& name, const Tensor& initial,
                                                  bool create_parts) {
  if (!client) throw invalid_argument("sharded variable '" + name + "' needs a ps client");
  if (!initial.defined() || initial.shape() != with.shape())
    throw invalid_argument("variable '" + name + "' colocated with sharded variable '" +
                           with.name() + "' " + with.shape().to_string() +
                           " needs a value of that shape, got " +
                           (initial.defined() ? initial.description() : std::string("none")));
  ShardLayout layout = ShardLayout::split(name, initial.shape(), initial.dtype(),
                                          int64_t(with.layout_.num_shards()));
  const auto& offsets = layout.row_offsets();
  for (size_t i = 0; i < layout.num_shards(); ++i) {
    const ShardInfo& info = layout.shard(i);
    if (create_parts)
      client->create(with.parts_[i],
                     ps_create_msg{{info.name, name, initial.shape().dims(), info.offset},
                                   initial.slice_rows(offsets[i], offsets[i + 1])});
  }
  return ShardedVariable(std::move(client), std::move(layout), with.parts_, with.tasks_);
}

void ShardedVariable::apply_gradients(const UpdateRule& rule, const Tensor& indices,
                                      const Tensor& grad, uint64_t step_id,
                                      const std::vector<const ShardedVariable*>& slots) {
  step_id = effective_step_id(step_id);
  for (const ShardedVariable* slot : slots)
    if (!slot || slot->layout_.row_offsets() != layout_.row_offsets() || slot->tasks_ != tasks_)
      throw failed_precondition(
          "optimizer slot '" + (slot ? slot->name() : std::string("?")) +
          "' of sharded variable '" + name() +
          "' is not split and placed like it: slots must be created colocated, part by part");
  auto slot_names = [&](size_t part) {
    std::vector<std::string> names;
    for (const ShardedVariable* slot : slots) names.push_back(slot->layout_.shard(part).name);
    return names;
  };
  std::vector<std::pair<caf::actor, ps_apply_msg>> steps;
  if (indices.defined()) {
    for (auto& r : route_rows("apply_gradients", indices, grad))
      steps.push_back(
          {parts_[r.part], ps_apply_msg{layout_.shard(r.part).name, step_id, to_rule_msg(rule),
                                        r.indices, r.rows, slot_names(r.part)}});
  } else {
    if (!grad.defined() || grad.dtype() != dtype() || grad.shape() != shape())
      throw invalid_argument("apply_gradients of sharded variable '" + name() +
                             "' needs a gradient of its layout " +
                             std::string(dtype_name(dtype())) + shape().to_string() + ", got " +
                             (grad.defined() ? grad.description() : std::string("none")));
    const auto& offsets = layout_.row_offsets();
    for (size_t i = 0; i < parts_.size(); ++i)
      steps.push_back(
          {parts_[i], ps_apply_msg{layout_.shard(i).name, step_id, to_rule_msg(rule), Tensor(),
                                   grad.slice_rows(offsets[i], offsets[i + 1]), slot_names(i)}});
  }
  client_->apply_all(steps);
}

std::vector<ps_saved_variable> ShardedVariable::save() const {
  std::vector<std::pair<caf::actor, ps_save_msg>> saves;
  for (size_t i = 0; i < parts_.size(); ++i)
    saves.push_back({parts_[i], ps_save_msg{{layout_.shard(i).name}}});
  std::vector<ps_saved_variable> out;
  for (auto& cp : client_->save_all(saves)) out.push_back(std::move(cp.variables.at(0)));
  return out;
}

ShardedVariable ShardedVariable::restore(std::shared_ptr<const PsClient> client,
                                         const std::vector<caf::actor>& ps_tasks,
                                         PlacementPolicy& placement,
                                         const std::vector<ps_saved_variable>& saved,
                                         int64_t num_shards) {
  if (saved.empty()) throw invalid_argument("restoring a sharded variable needs saved parts");
  const ps_saved_variable& first = saved[0];
  const std::string name = first.spec.full_name.empty() ? first.spec.name : first.spec.full_name;
  std::vector<SavedRows> rows;
  for (auto& part : saved) {
    const std::string full = part.spec.full_name.empty() ? part.spec.name : part.spec.full_name;
    const bool same = full == name && part.spec.full_shape == first.spec.full_shape &&
                      part.value.defined() && part.value.dtype() == first.value.dtype() &&
                      part.value.shape().rank() == first.spec.full_shape.size();
    if (!same)
      throw invalid_argument("saved part '" + part.spec.name + "' is not a part of '" + name +
                             "' " + Shape(first.spec.full_shape).to_string() + " like '" +
                             first.spec.name + "'");
    if (part.slot_rule != first.slot_rule)
      throw invalid_argument(
          "saved parts of '" + name + "' have different optimizer slots: '" + first.spec.name +
          "' " + (first.slot_rule.empty() ? "none" : first.slot_rule) + ", '" + part.spec.name +
          "' " + (part.slot_rule.empty() ? "none" : part.slot_rule));
    rows.push_back({part.spec.offset.empty() ? 0 : part.spec.offset[0], part.value.shape()[0]});
  }
  const DType dtype = first.value.dtype();
  ShardLayout layout = ShardLayout::split(name, Shape(first.spec.full_shape), dtype, num_shards);
  const auto plan = plan_reshard(name, rows, layout.row_offsets());

  std::vector<ps_saved_variable> parts(layout.num_shards());
  for (size_t t = 0; t < parts.size(); ++t) {
    const ShardInfo& info = layout.shard(t);
    parts[t].spec = {info.name, name, first.spec.full_shape, info.offset};
    parts[t].value = Tensor(dtype, info.shape);
    parts[t].slot_rule = first.slot_rule;
    for (size_t k = 0; k < first.slots.size(); ++k) parts[t].slots.emplace_back(dtype, info.shape);
  }
  std::vector<std::vector<size_t>> sources(parts.size());
  for (auto& c : plan) {
    copy_rows(saved[c.source].value, c.source_row, parts[c.target].value, c.target_row, c.rows);
    for (size_t k = 0; k < first.slots.size(); ++k)
      copy_rows(saved[c.source].slots.at(k), c.source_row, parts[c.target].slots[k], c.target_row,
                c.rows);
    sources[c.target].push_back(c.source);
  }
  for (size_t t = 0; t < parts.size(); ++t) {
    // Union of the sources' applied steps: the highest floor plus every sparse id above it.
    for (size_t s : sources[t]) {
      parts[t].updates = std::max(parts[t].updates, saved[s].updates);
      parts[t].applied_floor = std::max(parts[t].applied_floor, saved[s].applied_floor);
    }
    for (size_t s : sources[t])
      for (uint64_t id : saved[s].applied_sparse)
        if (id > parts[t].applied_floor) parts[t].applied_sparse.push_back(id);
    std::sort(parts[t].applied_sparse.begin(), parts[t].applied_sparse.end());
  }

  if (int64_t(ps_tasks.size()) != placement.num_tasks())
    throw invalid_argument("sharded variable '" + name + "': placement spans " +
                           std::to_string(placement.num_tasks()) + " ps tasks, " +
                           std::to_string(ps_tasks.size()) + " shard actors were given");
  std::vector<caf::actor> actors;
  std::vector<int64_t> tasks;
  std::vector<std::pair<caf::actor, ps_checkpoint_msg>> restores;
  for (size_t t = 0; t < parts.size(); ++t) {
    const ShardInfo& info = layout.shard(t);
    const int64_t task = placement.place({info.name, info.shape, dtype});
    actors.push_back(ps_tasks[size_t(task)]);
    tasks.push_back(task);
    restores.push_back({actors.back(), ps_checkpoint_msg{"", {parts[t]}}});
  }
  client->restore_all(restores);
  return ShardedVariable(std::move(client), std::move(layout), std::move(actors), std::move(tasks));
}

}  // namespace troupe
