#include "actors/ps_shard_store.hpp"

#include <algorithm>

#include "core/status.hpp"

namespace troupe {
namespace {

Error already_exists(const std::string& m) { return {Code::already_exists, m}; }

// A private copy when someone else still holds the bytes (a reader of an earlier value, or
// the sender of an assigned tensor): what was read never changes under its reader.
Tensor& owned(Tensor& t) {
  if (t.buffer().use_count() > 1) t = t.clone();
  return t;
}

void check_fits(const Tensor& x, const Tensor& value, const std::string& what) {
  if (x.dtype() != value.dtype() || x.shape() != value.shape())
    throw invalid_argument(what + " " + x.description() + " does not match the variable's " +
                           value.description());
}

OptimizerKind parse_rule(const std::string& name) {
  for (auto k :
       {OptimizerKind::sgd, OptimizerKind::momentum, OptimizerKind::adam, OptimizerKind::adagrad})
    if (optimizer_kind_name(k) == name) return k;
  throw invalid_argument("unknown optimizer '" + name + "' for the saved slots");
}

}  // namespace

PsShardStore::PsShardStore(std::string shard_name, std::shared_ptr<const KernelRegistry> kernels)
    : shard_name_(std::move(shard_name)), kernels_(std::move(kernels)), ops_(*kernels_) {}

std::vector<std::string> PsShardStore::names() const {
  std::vector<std::string> out;
  for (auto& [name, held] : held_) out.push_back(name);
  return out;
}

std::string PsShardStore::where(const Held& h) const {
  std::string w = "ps shard '" + shard_name_ + "', variable '" + h.spec.name + "'";
  if (h.spec.full_name != h.spec.name) {
    const int64_t first = h.spec.offset.empty() ? 0 : h.spec.offset[0];
    w += " (rows [" + std::to_string(first) + ", " + std::to_string(first + h.value.shape()[0]) +
         ") of '" + h.spec.full_name + "')";
  }
  return w;
}

template <class Fn>
auto PsShardStore::named(const Held& held, Fn&& fn) const -> decltype(fn()) {
  try {
    return fn();
  } catch (const Error& e) {
    throw Error(e.code(), where(held) + ": " + e.what());
  }
}

PsShardStore::Held& PsShardStore::find(const std::string& name) {
  return const_cast<Held&>(static_cast<const PsShardStore*>(this)->find(name));
}

const PsShardStore::Held& PsShardStore::find(const std::string& name) const {
  auto it = held_.find(name);
  if (it == held_.end())
    throw not_found("ps shard '" + shard_name_ + "' holds no variable '" + name + "'");
  return it->second;
}

void PsShardStore::create(PsVariableSpec spec, const Tensor& initial) {
  const std::string prefix = "ps shard '" + shard_name_ + "', variable '" + spec.name + "': ";
  if (spec.name.empty())
    throw invalid_argument("ps shard '" + shard_name_ + "': a variable needs a name");
  if (held_.count(spec.name)) throw already_exists(prefix + "already exists");
  if (!initial.defined() || initial.memory() != MemoryKind::host)
    throw invalid_argument(prefix + "the initial value must be a defined host tensor");
  if (spec.full_name.empty()) spec.full_name = spec.name;
  if (spec.full_shape.rank() == 0 && spec.full_name == spec.name) spec.full_shape = initial.shape();
  if (spec.offset.empty()) spec.offset.assign(spec.full_shape.rank(), 0);
  // The value must be rows [offset[0], offset[0] + rows) of the full variable.
  const Shape& full = spec.full_shape;
  bool fits = spec.offset.size() == full.rank() && initial.shape().rank() == full.rank();
  for (size_t d = 0; fits && d < full.rank(); ++d) {
    const int64_t end = spec.offset[d] + initial.shape()[d];
    fits = spec.offset[d] >= 0 && end <= full[d] &&
           (d == 0 || (spec.offset[d] == 0 && end == full[d]));
  }
  if (!fits)
    throw invalid_argument(prefix + "initial value " + initial.description() +
                           " does not fit at row offset " +
                           std::to_string(spec.offset.empty() ? 0 : spec.offset[0]) + " of '" +
                           spec.full_name + "' " + full.to_string());
  Held h;
  h.spec = std::move(spec);
  h.value = initial.clone();
  held_.emplace(h.spec.name, std::move(h));
}

Tensor PsShardStore::read(const std::string& name) const { return find(name).value; }

void PsShardStore::check_rows(const Held& h, const Tensor& rows, const char* op) const {
  if (!rows.defined() || rows.shape().rank() != 1 ||
      (rows.dtype() != DType::int32 && rows.dtype() != DType::int64))
    throw invalid_argument(std::string(op) + " needs rank-1 int32/int64 row indices, got " +
                           (rows.defined() ? rows.description() : std::string("none")));
  const int64_t n = h.value.shape()[0];
  dispatch_dtype(rows.dtype(), [&](auto t) {
    using I = decltype(t);
    if constexpr (std::is_integral_v<I>) {
      const I* p = rows.data<I>();
      for (int64_t k = 0; k < rows.num_elements(); ++k)
        if (p[k] < 0 || int64_t(p[k]) >= n)
          throw out_of_range(std::string(op) + ": row " + std::to_string(int64_t(p[k])) +
                             " is not in [0, " + std::to_string(n) + ")");
    }
  });
}

Tensor PsShardStore::gather(const std::string& name, const Tensor& rows) const {
  const Held& h = find(name);
  return named(h, [&] {
    if (h.value.shape().rank() == 0) throw invalid_argument("gather on a scalar");
    check_rows(h, rows, "gather");
    return ops_.gather_rows(h.value, rows);
  });
}

PsUpdateResult PsShardStore::write(const std::string& name, ShardWrite kind, uint64_t step_id,
                                   const Tensor& indices, const Tensor& value) {
  Held& h = find(name);
  if (h.applied.contains(step_id)) return {false, h.updates};
  named(h, [&] {
    const std::string op(shard_write_name(kind));
    if (!value.defined()) throw invalid_argument(op + " needs a value");
    if (is_scatter(kind)) {
      check_rows(h, indices, op.c_str());
      Tensor& v = owned(h.value);
      if (kind == ShardWrite::scatter_update) ops_.scatter_update_rows(indices, value, v);
      if (kind == ShardWrite::scatter_add) ops_.scatter_add_rows(indices, value, v);
      if (kind == ShardWrite::scatter_sub) ops_.scatter_sub_rows(indices, value, v);
      return;
    }
    check_fits(value, h.value, op + " value");
    Tensor& v = owned(h.value);
    if (kind == ShardWrite::assign) ops_.copy(value, v);
    if (kind == ShardWrite::assign_add) ops_.add(v, value, v);
    if (kind == ShardWrite::assign_sub) ops_.sub(v, value, v);
  });
  h.applied.first_time(step_id);
  return {true, ++h.updates};
}

void PsShardStore::ensure_slots(Held& h, const UpdateRule& rule) {
  if (h.has_slots) {
    if (h.slot_rule != rule.kind)
      throw failed_precondition("its slots were made for " +
                                std::string(optimizer_kind_name(h.slot_rule)) + ", the step uses " +
                                std::string(optimizer_kind_name(rule.kind)));
    return;
  }
  std::vector<Tensor> slots;
  for (auto slot : slot_names(rule.kind)) {
    Tensor s = Tensor::zeros(h.value.dtype(), h.value.shape());
    if (slot == "accumulator") ops_.fill(s, rule.initial_accumulator);
    slots.push_back(std::move(s));
  }
  h.slots = std::move(slots);
  h.slot_rule = rule.kind;
  h.has_slots = true;
}

std::vector<Tensor*> PsShardStore::named_slots(const Held& h, const UpdateRule& rule,
                                               const std::vector<std::string>& names) {
  const auto wanted = slot_names(rule.kind);
  if (names.size() != wanted.size())
    throw invalid_argument(std::string(optimizer_kind_name(rule.kind)) + " keeps " +
                           std::to_string(wanted.size()) + " slot(s), the step names " +
                           std::to_string(names.size()) + " slot variable(s)");
  std::vector<Tensor*> slots;
  for (auto& slot_name : names) {
    if (slot_name == h.spec.name) throw invalid_argument("the variable cannot be its own slot");
    auto it = held_.find(slot_name);
    if (it == held_.end())
      throw not_found("slot variable '" + slot_name + "' is not held by this shard");
    check_fits(it->second.value, h.value, "slot variable '" + slot_name + "'");
    slots.push_back(&owned(it->second.value));
  }
  return slots;
}

PsUpdateResult PsShardStore::apply(const std::string& name, uint64_t step_id,
                                   const UpdateRule& rule, const Tensor& indices,
                                   const Tensor& grad,
                                   const std::vector<std::string>& slot_variables) {
  Held& h = find(name);
  if (h.applied.contains(step_id)) return {false, h.updates};
  named(h, [&] {
    const std::string op = "apply " + std::string(optimizer_kind_name(rule.kind));
    if (!grad.defined()) throw invalid_argument(op + " needs a gradient");
    if (indices.defined()) {
      check_rows(h, indices, op.c_str());
    } else {
      check_fits(grad, h.value, op + " gradient");
    }
    std::vector<Tensor*> slots;
    if (!slot_variables.empty()) {
      slots = named_slots(h, rule, slot_variables);
    } else {
      ensure_slots(h, rule);
      for (auto& s : h.slots) slots.push_back(&owned(s));
    }
    apply_update_rule(ops_, rule, owned(h.value), slots, indices, grad);
  });
  h.applied.first_time(step_id);
  return {true, ++h.updates};
}

Tensor PsShardStore::slot(const std::string& name, size_t slot) const {
  const Held& h = find(name);
  if (slot >= h.slots.size())
    throw not_found(where(h) + ": no optimizer slot " + std::to_string(slot) + " (it has " +
                    std::to_string(h.slots.size()) + ")");
  return h.slots[slot];
}

std::vector<PsSavedVariable> PsShardStore::save(const std::vector<std::string>& names) const {
  std::vector<PsSavedVariable> out;
  for (auto& name : names.empty() ? this->names() : names) {
    const Held& h = find(name);
    PsSavedVariable s;
    s.spec = h.spec;
    s.value = h.value;  // a handle: the next write copies first, so the saved value stays put
    if (h.has_slots) s.slot_rule = std::string(optimizer_kind_name(h.slot_rule));
    s.slots = h.slots;
    s.updates = h.updates;
    s.applied_floor = h.applied.floor();
    s.applied_sparse = h.applied.sparse_ids();
    out.push_back(std::move(s));
  }
  return out;
}

void PsShardStore::restore(const std::vector<PsSavedVariable>& saved) {
  // Check everything first, so a bad entry leaves the shard as it was.
  for (auto& s : saved) {
    const std::string at = "ps shard '" + shard_name_ + "', restoring '" + s.spec.name + "': ";
    if (!s.value.defined()) throw invalid_argument(at + "the saved value is missing");
    auto it = held_.find(s.spec.name);
    if (it != held_.end() && (it->second.value.shape() != s.value.shape() ||
                              it->second.value.dtype() != s.value.dtype()))
      throw invalid_argument(at + "saved value " + s.value.description() +
                             " does not match the held " + it->second.value.description());
    if (!s.slot_rule.empty()) {
      const auto wanted = slot_names(parse_rule(s.slot_rule)).size();
      if (s.slots.size() != wanted)
        throw invalid_argument(at + s.slot_rule + " keeps " + std::to_string(wanted) +
                               " slot(s), the checkpoint has " + std::to_string(s.slots.size()));
      for (auto& slot : s.slots)
        if (!slot.defined() || slot.shape() != s.value.shape() || slot.dtype() != s.value.dtype())
          throw invalid_argument(at + "a saved slot does not match the value " +
                                 s.value.description());
    }
  }
  for (auto& s : saved) {
    Held h;
    h.spec = s.spec;
    if (h.spec.full_name.empty()) h.spec.full_name = h.spec.name;
    h.value = s.value.clone();
    h.has_slots = !s.slot_rule.empty();
    if (h.has_slots) h.slot_rule = parse_rule(s.slot_rule);
    for (auto& slot : s.slots) h.slots.push_back(slot.clone());
    h.updates = s.updates;
    h.applied = AppliedSteps::restored(s.applied_floor, s.applied_sparse);
    held_[s.spec.name] = std::move(h);
  }
}

}  // namespace troupe
