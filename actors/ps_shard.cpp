#include "actors/ps_shard.hpp"

#include <caf/all.hpp>

#include "actors/ps_shard_store.hpp"
#include "messages/atoms.hpp"
#include "messages/error_channel.hpp"
#include "messages/ps_messages.hpp"

namespace troupe {
namespace {

struct ps_shard_state {
  std::unique_ptr<PsShardStore> store;
  static inline const char* name = "ps_shard";
};

using ps_shard_actor = caf::stateful_actor<ps_shard_state>;

// Runs a request; a troupe error (or any exception) becomes the error reply instead of killing
// the shard, which must outlive a bad request.
template <class Fn>
auto answer(Fn&& fn) -> caf::result<decltype(fn())> {
  try {
    return fn();
  } catch (const std::exception& e) {
    return to_caf_error(status_of(e));
  }
}

PsVariableSpec spec_from(const ps_variable_spec& m) {
  return {m.name, m.full_name, Shape(m.full_shape), m.offset};
}

ps_variable_spec spec_to(const PsVariableSpec& s) {
  return {s.name, s.full_name, s.full_shape.dims(), s.offset};
}

ps_ack_msg ack(const std::string& name, uint64_t step_id, const PsUpdateResult& r) {
  return {name, step_id, r.applied, r.updates};
}

caf::behavior ps_shard(ps_shard_actor* self, PsShardOptions options) {
  self->state.store = std::make_unique<PsShardStore>(options.name, options.kernels);
  auto store = [self]() -> PsShardStore& { return *self->state.store; };
  return {
      [=](const ps_create_msg& m) {
        return answer([&] {
          store().create(spec_from(m.spec), m.initial);
          return ps_ack_msg{m.spec.name, 0, true, 0};
        });
      },
      [=](const ps_read_msg& m) {
        return answer([&] { return ps_value_msg{m.name, store().read(m.name)}; });
      },
      [=](const ps_gather_msg& m) {
        return answer([&] { return ps_value_msg{m.name, store().gather(m.name, m.rows)}; });
      },
      [=](const ps_write_msg& m) {
        return answer([&] {
          return ack(
              m.name, m.step_id,
              store().write(m.name, shard_write_from(m.kind), m.step_id, m.indices, m.value));
        });
      },
      [=](const ps_apply_msg& m) {
        return answer([&] {
          return ack(m.name, m.step_id,
                     store().apply(m.name, m.step_id, from_rule_msg(m.rule), m.indices, m.grad,
                                   m.slot_variables));
        });
      },
      [=](const ps_save_msg& m) {
        return answer([&] {
          ps_checkpoint_msg out;
          out.shard = store().shard_name();
          for (auto& s : store().save(m.names))
            out.variables.push_back({spec_to(s.spec), s.value, s.slot_rule, s.slots, s.updates,
                                     s.applied_floor, s.applied_sparse});
          return out;
        });
      },
      [=](const ps_checkpoint_msg& m) {
        return answer([&] {
          std::vector<PsSavedVariable> saved;
          for (auto& v : m.variables)
            saved.push_back({spec_from(v.spec), v.value, v.slot_rule, v.slots, v.updates,
                             v.applied_floor, v.applied_sparse});
          store().restore(saved);
          return ps_ack_msg{m.shard, 0, true, uint64_t(saved.size())};
        });
      },
      // Where large values may travel instead (only an authenticated client holds this handle,
      // and the bulk port asks for the secret again).
      [=](bulk_atom) { return options.bulk_port; },
      // The job is over (the coordinator says so): the shard stops, and the `troupe server`
      // hosting it, which monitors it, exits 0. Only an authenticated client holds this handle.
      [=](stop_atom) { self->quit(caf::exit_reason::user_shutdown); },
  };
}

}  // namespace

caf::actor spawn_ps_shard(caf::actor_system& sys, PsShardOptions options) {
  if (!options.kernels)
    throw invalid_argument("ps shard '" + options.name + "' needs a kernel registry");
  return sys.spawn(ps_shard, std::move(options));
}

ps_rule_msg to_rule_msg(const UpdateRule& r) {
  return {uint8_t(r.kind), r.learning_rate,       r.momentum, r.nesterov, r.beta1, r.beta2,
          r.epsilon,       r.initial_accumulator, r.step};
}

UpdateRule from_rule_msg(const ps_rule_msg& m) {
  if (m.kind > uint8_t(OptimizerKind::adagrad))
    throw invalid_argument("unknown optimizer kind " + std::to_string(m.kind) +
                           " (0 sgd, 1 momentum, 2 adam, 3 adagrad)");
  UpdateRule r;
  r.kind = static_cast<OptimizerKind>(m.kind);
  r.learning_rate = m.learning_rate;
  r.momentum = m.momentum;
  r.nesterov = m.nesterov;
  r.beta1 = m.beta1;
  r.beta2 = m.beta2;
  r.epsilon = m.epsilon;
  r.initial_accumulator = m.initial_accumulator;
  r.step = m.step;
  return r;
}

}  // namespace troupe
