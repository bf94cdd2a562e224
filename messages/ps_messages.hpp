#pragma once
// Messages of the ps_shard actor (actors/ps_shard.hpp): create, read (pull), gather rows, write
// (assign* / scatter*), apply an optimizer step, save and restore. Every request is answered
// with a typed reply or an error through messages/error_channel.hpp naming the shard and the
// variable. Updates carry a step id: one the shard has applied to that variable before is
// acknowledged (applied = false) and not applied again, which makes retried steps exactly-once.

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "messages/tensor_wire.hpp"

namespace troupe {

/// Where a held value sits in its variable: `name` is what the shard calls it ("emb/part_1"),
/// `full_name` the variable it is part of ("emb"; "" = itself), `offset` its first index per
/// axis in the variable of `full_shape` (empty = a whole variable).
struct ps_variable_spec {
  std::string name;
  std::string full_name;
  std::vector<int64_t> full_shape;
  std::vector<int64_t> offset;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ps_variable_spec& x) {
  return f(caf::meta::type_name("ps_variable_spec"), x.name, x.full_name, x.full_shape, x.offset);
}

/// -> ps_shard: hold a new variable (or part) with this initial value. Reply: ps_ack_msg.
struct ps_create_msg {
  ps_variable_spec spec;
  Tensor initial;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ps_create_msg& x) {
  return f(caf::meta::type_name("ps_create_msg"), x.spec, x.initial);
}

/// -> ps_shard: the current value of `name` (pull). Reply: ps_value_msg.
struct ps_read_msg {
  std::string name;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ps_read_msg& x) {
  return f(caf::meta::type_name("ps_read_msg"), x.name);
}

/// -> ps_shard: rows `rows` (rank-1 int32/int64, local to the part) of `name`; only those rows
/// travel back. Reply: ps_value_msg of shape [rows, value.shape[1:]].
struct ps_gather_msg {
  std::string name;
  Tensor rows;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ps_gather_msg& x) {
  return f(caf::meta::type_name("ps_gather_msg"), x.name, x.rows);
}

/// ps_shard -> requester: a value (read) or gathered rows (gather).
struct ps_value_msg {
  std::string name;
  Tensor value;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ps_value_msg& x) {
  return f(caf::meta::type_name("ps_value_msg"), x.name, x.value);
}

/// -> ps_shard: a write to `name`; `kind` is a ShardWrite (core/ps/shard_write.hpp): assign*
/// use `value`, scatter* use `indices` and `value` (the rows). Step id 0 = no deduplication.
/// Reply: ps_ack_msg.
struct ps_write_msg {
  std::string name;
  uint8_t kind = 0;
  uint64_t step_id = 0;
  Tensor indices;
  Tensor value;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ps_write_msg& x) {
  return f(caf::meta::type_name("ps_write_msg"), x.name, x.kind, x.step_id, x.indices, x.value);
}

/// An optimizer rule on the wire (kernels' UpdateRule; `kind` numbers OptimizerKind: 0 sgd,
/// 1 momentum, 2 adam, 3 adagrad).
struct ps_rule_msg {
  uint8_t kind = 0;
  double learning_rate = 0.01;
  double momentum = 0.9;
  bool nesterov = false;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-7;
  double initial_accumulator = 0.1;
  int64_t step = 1;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ps_rule_msg& x) {
  return f(caf::meta::type_name("ps_rule_msg"), x.kind, x.learning_rate, x.momentum, x.nesterov,
           x.beta1, x.beta2, x.epsilon, x.initial_accumulator, x.step);
}

/// -> ps_shard: one optimizer step on `name` with a dense `grad` (`indices` undefined) or the
/// gradient rows of `indices` (sparse; per-row slots). The rule's slots are the variables
/// `slot_variables` of the same shard (slot_names order; an optimizer that creates its slots as
/// variables), or, when that is empty, slots the shard keeps beside the variable. Reply:
/// ps_ack_msg.
struct ps_apply_msg {
  std::string name;
  uint64_t step_id = 0;
  ps_rule_msg rule;
  Tensor indices;
  Tensor grad;
  std::vector<std::string> slot_variables;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ps_apply_msg& x) {
  return f(caf::meta::type_name("ps_apply_msg"), x.name, x.step_id, x.rule, x.indices, x.grad,
           x.slot_variables);
}

/// ps_shard -> requester: the update to `name` with `step_id` was applied now (applied) or had
/// been applied before (a retry); `updates` counts the updates applied to it so far.
struct ps_ack_msg {
  std::string name;
  uint64_t step_id = 0;
  bool applied = false;
  uint64_t updates = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ps_ack_msg& x) {
  return f(caf::meta::type_name("ps_ack_msg"), x.name, x.step_id, x.applied, x.updates);
}

/// One saved variable of a shard: value, optimizer slots and the step ids applied to it.
struct ps_saved_variable {
  ps_variable_spec spec;
  Tensor value;
  std::string slot_rule;  ///< "" when the variable has no slots yet
  std::vector<Tensor> slots;
  uint64_t updates = 0;
  uint64_t applied_floor = 0;
  std::vector<uint64_t> applied_sparse;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ps_saved_variable& x) {
  return f(caf::meta::type_name("ps_saved_variable"), x.spec, x.value, x.slot_rule, x.slots,
           x.updates, x.applied_floor, x.applied_sparse);
}

/// -> ps_shard: save `names` (all when empty). Reply: ps_checkpoint_msg.
struct ps_save_msg {
  std::vector<std::string> names;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ps_save_msg& x) {
  return f(caf::meta::type_name("ps_save_msg"), x.names);
}

/// A shard's saved part (reply to ps_save_msg), or what to restore (-> ps_shard; reply:
/// ps_ack_msg with `updates` = variables restored).
struct ps_checkpoint_msg {
  std::string shard;
  std::vector<ps_saved_variable> variables;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ps_checkpoint_msg& x) {
  return f(caf::meta::type_name("ps_checkpoint_msg"), x.shard, x.variables);
}

}  // namespace troupe
