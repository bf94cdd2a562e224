#include "actors/ps_shard.hpp"

#include <chrono>
#include <cstdio>
#include <map>
#include <set>

#include <caf/all.hpp>

#include "actors/ps_shard_store.hpp"
#include "messages/atoms.hpp"
#include "messages/error_channel.hpp"
#include "messages/ps_messages.hpp"

namespace troupe {
namespace {

struct ps_shard_state {
  std::unique_ptr<PsShardStore> store;
  std::string shard_name;
  std::chrono::milliseconds replica_timeout{std::chrono::seconds(60)};
  // Primary-backup (replication 2): this shard copies every change to its own variables to
  // `backup` before it acknowledges, and holds the copies of `primary`'s variables
  // (`replicas`), which it applies without copying further.
  caf::actor backup;
  std::string backup_name;
  caf::actor_addr primary;
  std::string primary_name;
  std::set<std::string> replicas;
  // Changes applied here whose copy the backup has not acknowledged yet: answered with their
  // local acknowledgement when the backup goes away.
  uint64_t next_pending = 0;
  std::map<uint64_t, std::pair<caf::typed_response_promise<ps_ack_msg>, ps_ack_msg>> pending;
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

// Runs a state change; the error to reply with when it fails (none when it succeeded).
template <class Fn>
caf::error failure_of(Fn&& fn) {
  try {
    fn();
    return caf::error{};
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

// A request from the primary this shard backs up: a copy to apply, not to copy further.
bool from_primary(ps_shard_actor* self) {
  return self->state.primary &&
         caf::actor_cast<caf::actor_addr>(self->current_sender()) == self->state.primary;
}

// The backup went away: the changes waiting for its copy stay acknowledged (they are here),
// and later ones are acknowledged at once.
void lose_backup(ps_shard_actor* self, const std::string& why) {
  auto& st = self->state;
  if (!st.backup) return;
  std::fprintf(stderr,
               "ps shard '%s': its backup %s went away (%s); its variables now have no "
               "backup\n",
               st.shard_name.c_str(), st.backup_name.c_str(), why.c_str());
  st.backup = caf::actor{};
  auto pending = std::move(st.pending);
  st.pending.clear();
  for (auto& [id, waiting] : pending) waiting.first.deliver(waiting.second);
}

// The primary went away: this shard serves its variables from now on.
void lose_primary(ps_shard_actor* self, const std::string& why) {
  auto& st = self->state;
  if (!st.primary) return;
  std::fprintf(stderr,
               "ps shard '%s': primary %s went away (%s); serving its %zu variable(s) as "
               "their primary, without a backup\n",
               st.shard_name.c_str(), st.primary_name.c_str(), why.c_str(), st.replicas.size());
  st.primary = caf::actor_addr{};
}

// Acknowledges `local` (already applied here) once the backup has applied `m` too, so nothing
// acknowledged is lost with this shard. A copy of another shard's variable (or no backup) is
// acknowledged at once. A backup that went away is dropped (the change stays acknowledged:
// it is on this shard); one that refuses the copy fails the request, naming it.
template <class Msg>
caf::result<ps_ack_msg> replicated(ps_shard_actor* self, bool own, const Msg& m, ps_ack_msg local) {
  auto& st = self->state;
  if (!own || !st.backup) return local;
  auto promise = self->make_response_promise<ps_ack_msg>();
  const uint64_t id = st.next_pending++;
  st.pending.emplace(id, std::make_pair(promise, local));
  // The answer for `id`, unless lose_backup already gave it.
  auto settle = [self, id](auto&& answer) {
    auto it = self->state.pending.find(id);
    if (it == self->state.pending.end()) return;
    auto promise = it->second.first;
    self->state.pending.erase(it);
    promise.deliver(answer);
  };
  self->request(st.backup, st.replica_timeout, m)
      .then([settle, local](ps_ack_msg&) { settle(local); },
            [self, settle, local](caf::error& e) {
              auto& st = self->state;
              if (e == caf::sec::request_receiver_down) {
                lose_backup(self, "request_receiver_down");
                settle(local);
                return;
              }
              Status s = to_status(e);
              settle(to_caf_error(Status(
                  s.code(), "ps shard '" + st.shard_name + "': its backup " + st.backup_name +
                                " did not take the copy of '" + local.name + "': " + s.message())));
            });
  return promise;
}

caf::behavior ps_shard(ps_shard_actor* self, PsShardOptions options) {
  self->state.store = std::make_unique<PsShardStore>(options.name, options.kernels);
  self->state.shard_name = options.name;
  self->state.replica_timeout = options.replica_timeout;
  self->set_down_handler([self](caf::down_msg& down) {
    auto& st = self->state;
    if (st.backup && down.source == st.backup.address())
      lose_backup(self, describe_exit(down.reason));
    if (st.primary && down.source == st.primary) lose_primary(self, describe_exit(down.reason));
  });
  auto store = [self]() -> PsShardStore& { return *self->state.store; };
  return {
      // (replicate_atom, backup, its name, primary, its name): set up primary-backup. Either
      // handle may be invalid (no backup / backing up nobody).
      [=](replicate_atom, const caf::actor& backup, const std::string& backup_name,
          const caf::actor& primary, const std::string& primary_name) {
        auto& st = self->state;
        st.backup = backup;
        st.backup_name = backup_name;
        st.primary = primary.address();
        st.primary_name = primary_name;
        if (backup) self->monitor(backup);
        if (primary) self->monitor(primary);
        return caf::ok_atom::value;
      },
      // (shard_gone_atom, shard): a client saw `shard` go away. Across processes the copies
      // travel through the client's node, so this shard may never see the down message itself.
      [=](shard_gone_atom, const caf::actor& gone) {
        auto& st = self->state;
        if (st.backup && gone.address() == st.backup.address())
          lose_backup(self, "a client saw it go away");
        if (st.primary && gone.address() == st.primary)
          lose_primary(self, "a client saw it go away");
      },
      [=](const ps_create_msg& m) -> caf::result<ps_ack_msg> {
        const bool own = !from_primary(self);
        if (auto e = failure_of([&] { store().create(spec_from(m.spec), m.initial); })) return e;
        if (!own) self->state.replicas.insert(m.spec.name);
        return replicated(self, own, m, ps_ack_msg{m.spec.name, 0, true, 0});
      },
      [=](const ps_read_msg& m) {
        return answer([&] { return ps_value_msg{m.name, store().read(m.name)}; });
      },
      [=](const ps_gather_msg& m) {
        return answer([&] { return ps_value_msg{m.name, store().gather(m.name, m.rows)}; });
      },
      [=](const ps_write_msg& m) -> caf::result<ps_ack_msg> {
        ps_ack_msg out;
        if (auto e = failure_of([&] {
              out = ack(
                  m.name, m.step_id,
                  store().write(m.name, shard_write_from(m.kind), m.step_id, m.indices, m.value));
            }))
          return e;
        return replicated(self, !self->state.replicas.count(m.name), m, out);
      },
      [=](const ps_apply_msg& m) -> caf::result<ps_ack_msg> {
        ps_ack_msg out;
        if (auto e = failure_of([&] {
              out = ack(m.name, m.step_id,
                        store().apply(m.name, m.step_id, from_rule_msg(m.rule), m.indices, m.grad,
                                      m.slot_variables));
            }))
          return e;
        // A repeat (applied = false) is copied too: the first attempt's copy may not have
        // reached the backup before the client gave up on it; the backup deduplicates it.
        return replicated(self, !self->state.replicas.count(m.name), m, out);
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
      [=](const ps_checkpoint_msg& m) -> caf::result<ps_ack_msg> {
        const bool own = !from_primary(self);
        ps_ack_msg out;
        if (auto e = failure_of([&] {
              std::vector<PsSavedVariable> saved;
              for (auto& v : m.variables)
                saved.push_back({spec_from(v.spec), v.value, v.slot_rule, v.slots, v.updates,
                                 v.applied_floor, v.applied_sparse});
              store().restore(saved);
              out = ps_ack_msg{m.shard, 0, true, uint64_t(saved.size())};
            }))
          return e;
        if (!own)
          for (auto& v : m.variables) self->state.replicas.insert(v.spec.name);
        return replicated(self, own, m, out);
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
