#include "coordinator/ps/parameter_server_storage.hpp"

#include "actors/ps_shard.hpp"
#include "coordinator/ps/step_id_scope.hpp"
#include "core/ps/placement.hpp"
#include "core/ps/shard_write.hpp"

namespace troupe {
namespace {

ShardWrite shard_write_of(VariableWrite kind) {
  switch (kind) {
    case VariableWrite::assign: return ShardWrite::assign;
    case VariableWrite::add: return ShardWrite::assign_add;
    case VariableWrite::sub: return ShardWrite::assign_sub;
    case VariableWrite::scatter_update: return ShardWrite::scatter_update;
    case VariableWrite::scatter_add: return ShardWrite::scatter_add;
    case VariableWrite::scatter_sub: return ShardWrite::scatter_sub;
  }
  return ShardWrite::assign;
}

}  // namespace

std::shared_ptr<ParameterServerStorage> ParameterServerStorage::create(
    std::shared_ptr<const PsClient> client, caf::actor shard, int64_t task, const std::string& name,
    const Tensor& initial) {
  client->create(shard, ps_create_msg{{name, "", {}, {}}, initial});
  return std::make_shared<ParameterServerStorage>(std::move(client), std::move(shard), task, name,
                                                  initial.dtype(), initial.shape());
}

ParameterServerStorage::ParameterServerStorage(std::shared_ptr<const PsClient> client,
                                               caf::actor shard, int64_t task, std::string name,
                                               DType dtype, Shape shape)
    : client_(std::move(client)),
      shard_(std::move(shard)),
      task_(task),
      name_(std::move(name)),
      dtype_(dtype),
      shape_(std::move(shape)) {
  if (!client_ || !shard_)
    throw invalid_argument("variable '" + name_ + "' needs a ps client and a shard actor");
}

std::vector<std::string> ParameterServerStorage::devices() const { return {ps_device(task_)}; }

void ParameterServerStorage::check_copy(size_t copy, const char* op) const {
  if (copy != 0)
    throw out_of_range(std::string(op) + " of copy " + std::to_string(copy) + " of variable '" +
                       name_ + "': it lives once, on " + ps_device(task_));
}

Tensor ParameterServerStorage::read(size_t copy) const {
  check_copy(copy, "read");
  return client_->read(shard_, name_);
}

void ParameterServerStorage::write(size_t copy, VariableWrite kind,
                                   const std::vector<Tensor>& args) {
  check_copy(copy, "write");
  const ShardWrite w = shard_write_of(kind);
  const size_t wanted = is_scatter(w) ? 2 : 1;
  if (args.size() != wanted)
    throw invalid_argument(std::string(shard_write_name(w)) + " of variable '" + name_ +
                           "' takes " + std::to_string(wanted) + " tensor(s), got " +
                           std::to_string(args.size()));
  ps_write_msg m{name_, uint8_t(w), effective_step_id(step_id_), is_scatter(w) ? args[0] : Tensor(),
                 args.back()};
  client_->write(shard_, m);
}

void ParameterServerStorage::apply_update(size_t copy, const UpdateRule& rule,
                                          const std::vector<VariableStorage*>& slots,
                                          const Tensor& indices, const Tensor& grad) {
  check_copy(copy, "apply_update");
  std::vector<std::string> slot_names;
  for (auto* slot : slots) {
    auto* ps = dynamic_cast<ParameterServerStorage*>(slot);
    if (!ps || ps->shard_ != shard_)
      throw failed_precondition("optimizer slot '" + (slot ? slot->name() : std::string("?")) +
                                "' of variable '" + name_ + "' lives on " +
                                (ps ? ps_device(ps->task_) : std::string("another device")) +
                                ", the variable on " + ps_device(task_) +
                                ": slots must be on the variable's shard so the step runs there");
    slot_names.push_back(ps->name_);
  }
  client_->apply(shard_, ps_apply_msg{name_, effective_step_id(step_id_), to_rule_msg(rule),
                                      indices, grad, std::move(slot_names)});
}

std::vector<Variable>& ParameterServerStorage::local_copies() {
  throw failed_precondition("variable '" + name_ + "' lives on " + ps_device(task_) +
                            ": it has no copy in this process to update in place");
}

}  // namespace troupe
