#include "coordinator/ps/sharded_storage.hpp"

#include "core/status.hpp"

namespace troupe {

std::vector<std::string> ShardedStorage::devices() const {
  return {ps_device(variable_.tasks().at(0))};
}

void ShardedStorage::check_copy(size_t copy, const char* op) const {
  if (copy != 0)
    throw out_of_range(std::string(op) + " of copy " + std::to_string(copy) +
                       " of sharded variable '" + name() + "': it lives once, on its ps shards");
}

Tensor ShardedStorage::read(size_t copy) const {
  check_copy(copy, "read");
  return variable_.read();
}

void ShardedStorage::write(size_t copy, VariableWrite kind, const std::vector<Tensor>& args) {
  check_copy(copy, "write");
  const bool scatter = kind == VariableWrite::scatter_update ||
                       kind == VariableWrite::scatter_add || kind == VariableWrite::scatter_sub;
  const size_t wanted = scatter ? 2 : 1;
  if (args.size() != wanted)
    throw invalid_argument("write of sharded variable '" + name() + "' takes " +
                           std::to_string(wanted) + " tensor(s), got " +
                           std::to_string(args.size()));
  switch (kind) {
    case VariableWrite::assign: variable_.assign(args[0]); break;
    case VariableWrite::add: variable_.assign_add(args[0]); break;
    case VariableWrite::sub: variable_.assign_sub(args[0]); break;
    case VariableWrite::scatter_update: variable_.scatter_update(args[0], args[1]); break;
    case VariableWrite::scatter_add: variable_.scatter_add(args[0], args[1]); break;
    case VariableWrite::scatter_sub: variable_.scatter_sub(args[0], args[1]); break;
  }
}

void ShardedStorage::apply_update(size_t copy, const UpdateRule& rule,
                                  const std::vector<VariableStorage*>& slots, const Tensor& indices,
                                  const Tensor& grad) {
  check_copy(copy, "apply_update");
  std::vector<const ShardedVariable*> slot_variables;
  for (auto* slot : slots) {
    auto* sharded = dynamic_cast<ShardedStorage*>(slot);
    if (!sharded)
      throw failed_precondition("optimizer slot '" + (slot ? slot->name() : std::string("?")) +
                                "' of sharded variable '" + name() +
                                "' is not sharded beside it: slots must be created colocated");
    slot_variables.push_back(&sharded->variable_);
  }
  variable_.apply_gradients(rule, indices, grad, 0, slot_variables);
}

std::vector<Variable>& ShardedStorage::local_copies() {
  throw failed_precondition("sharded variable '" + name() +
                            "' lives on ps shards: it has no copy in this process to update in "
                            "place");
}

}  // namespace troupe
