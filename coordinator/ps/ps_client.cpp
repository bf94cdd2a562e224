#include "coordinator/ps/ps_client.hpp"

#include <cstdio>
#include <exception>
#include <functional>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include <caf/all.hpp>

#include "coordinator/ps/ps_bulk_client.hpp"
#include "messages/atoms.hpp"
#include "messages/error_channel.hpp"
#include "messages/timed_request.hpp"

namespace troupe {
namespace {

// What a request is about, for the error when its shard goes away.
template <class Msg>
std::string subject(const Msg& m) {
  return "variable '" + m.name + "'";
}
std::string subject(const ps_create_msg& m) { return "variable '" + m.spec.name + "'"; }
std::string subject(const ps_save_msg&) { return "save"; }
std::string subject(const ps_checkpoint_msg&) { return "restore"; }

using Names = std::vector<std::pair<caf::actor, std::string>>;

// What a shard is called in an error: "ps shard", plus its name when the client was given one.
std::string label_of(const caf::actor& shard, const Names& names) {
  std::string label = "ps shard";
  for (auto& [s, name] : names)
    if (s == shard) label += " " + name;
  return label;
}

// Sends every request at once from a short-lived event-based actor that monitors the shards:
// the shards work concurrently, and one that goes away (a killed ps process) fails the batch
// as soon as CAF notices, instead of at the request timeout — or, when it has a backup
// (replication 2), its requests are sent again to the backup, which serves its variables from
// then on. The caller waits for the batch.
template <class Reply, class Msg>
std::vector<Reply> ask_all(caf::actor_system& sys, std::chrono::milliseconds timeout,
                           const std::vector<std::pair<caf::actor, Msg>>& requests,
                           const Names& names, const std::shared_ptr<PsFailover>& failover) {
  for (auto& r : requests)
    if (!r.first) throw invalid_argument("ps request to an empty actor handle");
  struct Batch {
    std::vector<Reply> replies;
    std::vector<caf::actor> targets;  // where request i went last
    size_t left = 0;
    bool done = false;
    caf::typed_response_promise<std::vector<Reply>> promise;
  };
  // The requests and the timeout are arguments, not captures: CAF 0.17 binds a null tuple for
  // argument-less actor functions, which UBSan reports.
  using Requests = std::vector<std::pair<caf::actor, Msg>>;
  auto batch = sys.spawn(
      [](caf::event_based_actor* self, Requests requests, Names names,
         std::shared_ptr<PsFailover> failover, std::chrono::milliseconds timeout) -> caf::behavior {
        return {[=](caf::ok_atom) -> caf::result<std::vector<Reply>> {
          auto state = std::make_shared<Batch>();
          state->replies.resize(requests.size());
          state->targets.resize(requests.size());
          state->left = requests.size();
          state->promise = self->make_response_promise<std::vector<Reply>>();
          // Sends request i to whichever shard serves its variables now. It and the handlers
          // it installs refer to each other: emptied when the batch ends, which breaks the cycle.
          auto send = std::make_shared<std::function<void(size_t)>>();
          auto fail = [=](caf::error e) {
            if (state->done) return;
            state->done = true;
            state->promise.deliver(std::move(e));
            *send = nullptr;
            self->quit();
          };
          // Request i's shard went away: to its backup, or the batch fails naming the shard.
          auto gone = [=](size_t i, const std::string& why) {
            const caf::actor target = state->targets[i];
            caf::actor next = failover->serving(target);
            if (next == target) next = failover->fail_over(target, label_of(target, names), why);
            if (next && next != target) {
              (*send)(i);
              return;
            }
            fail(to_caf_error(Status(Code::unavailable, label_of(target, names) + " serving " +
                                                            subject(requests[i].second) +
                                                            " went away: " + why)));
          };
          *send = [=](size_t i) {
            const caf::actor target = failover->serving(requests[i].first);
            state->targets[i] = target;
            self->monitor(target);
            self->request(target, timeout, requests[i].second)
                .then(
                    [=](Reply& r) {
                      if (state->done || state->targets[i] != target) return;
                      state->replies[i] = std::move(r);
                      if (--state->left == 0) {
                        state->done = true;
                        state->promise.deliver(std::move(state->replies));
                        *send = nullptr;
                        self->quit();
                      }
                    },
                    [=](caf::error& e) {
                      if (state->done || state->targets[i] != target) return;
                      if (e == caf::sec::request_receiver_down) {
                        gone(i, "request_receiver_down");
                        return;
                      }
                      // A shard that is alive but silent (a stopped process, a cut link
                      // without a reset) is named like one that went away.
                      if (e == caf::sec::request_timeout)
                        e = to_caf_error(Status(Code::deadline_exceeded,
                                                label_of(target, names) + " serving " +
                                                    subject(requests[i].second) +
                                                    " did not answer within " +
                                                    std::to_string(timeout.count()) + " ms"));
                      fail(e);
                    });
          };
          self->set_down_handler([=](caf::down_msg& down) {
            for (size_t i = 0; i < requests.size() && !state->done; ++i)
              if (state->targets[i].address() == down.source) gone(i, describe_exit(down.reason));
          });
          for (size_t i = 0; i < requests.size(); ++i) (*send)(i);
          return state->promise;
        }};
      },
      requests, names, failover, timeout);
  caf::scoped_actor caller{sys};
  std::vector<Reply> replies;
  Status failure;
  caller->request(batch, caf::infinite, caf::ok_atom::value)
      .receive([&](std::vector<Reply>& r) { replies = std::move(r); },
               [&](caf::error& e) { failure = to_status(e); });
  failure.throw_if_error();
  return replies;
}

template <class Reply, class Msg>
Reply ask_one(caf::actor_system& sys, std::chrono::milliseconds timeout, const caf::actor& to,
              const Msg& msg, const Names& names, const std::shared_ptr<PsFailover>& failover) {
  return ask_all<Reply, Msg>(sys, timeout, {{to, msg}}, names, failover).at(0);
}

// Which requests a bulk connection carries: pulls always (their size is not known before the
// reply), the gathers, pushes and applies the bulk client takes; every other message stays on
// CAF. `row_bytes`: a gathered row's size (gathers only).
bool via_bulk(const PsBulkClient&, const ps_read_msg&, uint64_t) { return true; }
bool via_bulk(const PsBulkClient& b, const ps_gather_msg& m, uint64_t row_bytes) {
  return b.carries(m, row_bytes);
}
bool via_bulk(const PsBulkClient& b, const ps_write_msg& m, uint64_t) { return b.carries(m); }
bool via_bulk(const PsBulkClient& b, const ps_apply_msg& m, uint64_t) { return b.carries(m); }
// The payload a request moves, where known before its reply: a pull's is not.
uint64_t known_payload(const ps_read_msg&, uint64_t) { return 0; }
uint64_t known_payload(const ps_gather_msg& m, uint64_t row_bytes) {
  return uint64_t(m.rows.num_elements()) * row_bytes;
}
uint64_t known_payload(const ps_write_msg& m, uint64_t) { return m.value.byte_size(); }
uint64_t known_payload(const ps_apply_msg& m, uint64_t) { return m.grad.byte_size(); }

ps_value_msg receive(PsBulkClient& b, PsBulkClient::Sent s, ps_value_msg*) {
  return b.receive_value(std::move(s));
}
ps_ack_msg receive(PsBulkClient& b, PsBulkClient::Sent s, ps_ack_msg*) {
  return b.receive_ack(std::move(s));
}

// ask_all, except that the requests a bulk connection carries go there, in waves of at most
// kPsBulkConnectionsKept per ps task. In a wave, those of known payload below
// kPsBulkOwnThreadBytes (pulls among them) are all written out from this thread first, the CAF
// batch runs (with the first wave), and then their replies are read in turn: the ps tasks work
// on them in the meantime, and no thread is started — a thread's start and join cost about as
// much as the transfer itself there (~37 us on the 2-vCPU VMs, as does handing work to a parked
// thread). Larger ones each get a thread, so that their copies run on several cores at once
// (with nothing else to do, this thread carries one of them). Replies in request order; the
// first failure is thrown once its wave is done, and later waves are not sent.
template <class Reply, class Msg, class BulkFor>
std::vector<Reply> ask_routed(caf::actor_system& sys, std::chrono::milliseconds timeout,
                              const std::vector<std::pair<caf::actor, Msg>>& requests,
                              const Names& names, const std::shared_ptr<PsFailover>& failover,
                              BulkFor bulk_for, uint64_t row_bytes = 0) {
  std::vector<PsBulkClient*> bulk(requests.size(), nullptr);
  std::vector<std::pair<caf::actor, Msg>> by_caf;
  std::vector<size_t> caf_index;
  std::vector<std::vector<size_t>> waves;
  std::map<PsBulkClient*, size_t> per_task;
  for (size_t i = 0; i < requests.size(); ++i) {
    // A shard that failed over is served by its backup, over CAF: bulk goes to primaries only.
    const caf::actor& shard = requests[i].first;
    PsBulkClient* b = failover->serving(shard) == shard ? bulk_for(shard) : nullptr;
    if (b && via_bulk(*b, requests[i].second, row_bytes)) {
      bulk[i] = b;
      const size_t wave = per_task[b]++ / kPsBulkConnectionsKept;
      if (waves.size() <= wave) waves.resize(wave + 1);
      waves[wave].push_back(i);
    } else {
      by_caf.push_back(requests[i]);
      caf_index.push_back(i);
    }
  }
  if (by_caf.size() == requests.size())
    return ask_all<Reply, Msg>(sys, timeout, requests, names, failover);
  // A primary lost during a bulk transfer: with a backup (replication 2) the request goes
  // again, unchanged (the same step id, so applied once), to the backup over CAF.
  auto or_backup = [&](size_t i, auto&& transfer) -> Reply {
    try {
      return transfer();
    } catch (const Error& e) {
      const caf::actor& shard = requests[i].first;
      if (e.status().code() != Code::unavailable ||
          !failover->fail_over(shard, label_of(shard, names), e.status().message()))
        throw;
      return ask_all<Reply, Msg>(sys, timeout, {{shard, requests[i].second}}, names, failover)
          .at(0);
    }
  };
  // A request whose bulk connection could not be made (nothing was sent: the ps task takes no
  // new connection, at its limit or gone) goes to the same shard through CAF, where a shard
  // that is gone fails over as always.
  auto reply_to = [&](size_t i, PsBulkClient::Sent sent) -> Reply {
    if (sent.refused()) {
      const caf::actor& shard = requests[i].first;
      if (bulk[i]->first_refusal())
        std::cerr << "troupe: " << label_of(shard, names)
                  << ": its bulk port took no new connection; such requests go through CAF\n";
      return ask_all<Reply, Msg>(sys, timeout, {{shard, requests[i].second}}, names, failover)
          .at(0);
    }
    return or_backup(
        i, [&] { return receive(*bulk[i], std::move(sent), static_cast<Reply*>(nullptr)); });
  };
  auto whole = [&](size_t i) { return reply_to(i, bulk[i]->send(requests[i].second)); };
  std::vector<Reply> out(requests.size());
  std::exception_ptr failure;
  auto keep_first_failure = [&] {
    if (!failure) failure = std::current_exception();
  };
  for (size_t w = 0; w < waves.size() && !failure; ++w) {
    const bool with_caf = w == 0 && !by_caf.empty();
    std::vector<size_t> in_turn, own_thread;
    for (size_t i : waves[w]) {
      const bool large = known_payload(requests[i].second, row_bytes) >= kPsBulkOwnThreadBytes;
      (large ? own_thread : in_turn).push_back(i);
    }
    if (!with_caf && in_turn.empty() && !own_thread.empty()) {
      in_turn.push_back(own_thread.back());  // carried here, as one "in turn" request
      own_thread.pop_back();
    }
    std::vector<std::future<Reply>> pending(requests.size());
    for (size_t i : own_thread)
      pending[i] = std::async(std::launch::async, [&, i] { return whole(i); });
    std::vector<PsBulkClient::Sent> sent(requests.size());
    for (size_t i : in_turn) sent[i] = bulk[i]->send(requests[i].second);
    try {
      if (with_caf) {
        auto replies = ask_all<Reply, Msg>(sys, timeout, by_caf, names, failover);
        for (size_t k = 0; k < replies.size(); ++k) out[caf_index[k]] = std::move(replies[k]);
      }
    } catch (...) {
      keep_first_failure();
    }
    for (size_t i : in_turn) {
      try {
        out[i] = reply_to(i, std::move(sent[i]));
      } catch (...) {
        keep_first_failure();
      }
    }
    for (size_t i : own_thread) {
      try {
        out[i] = pending[i].get();
      } catch (...) {
        keep_first_failure();
      }
    }
  }
  if (failure) std::rethrow_exception(failure);
  return out;
}

}  // namespace

PsClient::PsClient(caf::actor_system& sys, std::chrono::milliseconds timeout)
    : sys_(&sys), timeout_(timeout) {}

void PsClient::create(const caf::actor& shard, const ps_create_msg& msg) const {
  ask_one<ps_ack_msg>(*sys_, timeout_, shard, msg, names_, failover_);
}

Tensor PsClient::read(const caf::actor& shard, const std::string& name) const {
  return ask_routed<ps_value_msg>(
             *sys_, timeout_,
             std::vector<std::pair<caf::actor, ps_read_msg>>{{shard, ps_read_msg{name}}}, names_,
             failover_, [this](const caf::actor& a) { return bulk_for(a); })
      .at(0)
      .value;
}

ps_ack_msg PsClient::write(const caf::actor& shard, const ps_write_msg& msg) const {
  return write_all({{shard, msg}}).at(0);
}

ps_ack_msg PsClient::apply(const caf::actor& shard, const ps_apply_msg& msg) const {
  return apply_all({{shard, msg}}).at(0);
}

ps_checkpoint_msg PsClient::save(const caf::actor& shard, const ps_save_msg& msg) const {
  return ask_one<ps_checkpoint_msg>(*sys_, timeout_, shard, msg, names_, failover_);
}

ps_ack_msg PsClient::restore(const caf::actor& shard, const ps_checkpoint_msg& msg) const {
  return ask_one<ps_ack_msg>(*sys_, timeout_, shard, msg, names_, failover_);
}

void PsFailover::set_backup(const caf::actor& primary, caf::actor backup) {
  std::lock_guard<std::mutex> lock(mutex_);
  backup_[primary.address()] = std::move(backup);
}

caf::actor PsFailover::serving(const caf::actor& shard) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!gone_.count(shard.address())) return shard;
  auto it = backup_.find(shard.address());
  // One backup only: when it went away too, nothing serves the shard's variables.
  if (it == backup_.end() || gone_.count(it->second.address())) return shard;
  return it->second;
}

caf::actor PsFailover::fail_over(const caf::actor& shard, const std::string& label,
                                 const std::string& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = backup_.find(shard.address());
  if (it == backup_.end()) return caf::actor{};
  const bool first = gone_.insert(shard.address()).second;
  if (gone_.count(it->second.address())) return caf::actor{};
  if (first) {
    std::fprintf(stderr,
                 "ps client: %s went away (%s); its backup serves its variables from now on, "
                 "without a backup of its own\n",
                 label.c_str(), why.c_str());
    // The other shards may not see it themselves (across processes their copies travel
    // through this client's node): every other shard is told (each is some shard's backup).
    for (auto& entry : backup_)
      if (entry.second.address() != shard.address())
        caf::anon_send(entry.second, shard_gone_atom::value, shard);
  }
  return it->second;
}

size_t PsFailover::failed_over() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return gone_.size();
}

namespace {

void check_replicable(const std::vector<caf::actor>& shards) {
  if (shards.size() < 2)
    throw invalid_argument(
        "ps replication needs at least two ps shards (a backup on another "
        "one), got " +
        std::to_string(shards.size()));
}

}  // namespace

void PsClient::learn_backups(const std::vector<caf::actor>& shards) {
  check_replicable(shards);
  for (size_t k = 0; k < shards.size(); ++k)
    failover_->set_backup(shards[k], shards[(k + 1) % shards.size()]);
}

void PsClient::replicate(const std::vector<caf::actor>& shards) {
  check_replicable(shards);
  const size_t n = shards.size();
  // What the shards call each other in their log lines: the client's name for a shard, else
  // its task ("ps:k", as in-process clusters name them).
  auto name = [&](size_t k) {
    for (auto& [s, label] : names_)
      if (s == shards[k]) return label;
    return "'ps:" + std::to_string(k) + "'";
  };
  caf::scoped_actor self{*sys_};
  for (size_t k = 0; k < n; ++k) {
    const caf::actor& backup = shards[(k + 1) % n];
    const caf::actor& primary = shards[(k + n - 1) % n];
    Status failure;
    timed_request(self, shards[k], timeout_, replicate_atom::value, backup, name((k + 1) % n),
                  primary, name((k + n - 1) % n))
        .receive([](caf::ok_atom) {}, [&](caf::error& e) { failure = to_status(e); });
    if (!failure.ok())
      throw Error(Status(failure.code(), "ps replication: " + label_of(shards[k], names_) +
                                             " did not take its backup: " + failure.message()));
    failover_->set_backup(shards[k], backup);
  }
}

void PsClient::name_shards(const std::vector<caf::actor>& shards,
                           const std::vector<std::string>& names) {
  if (shards.size() != names.size())
    throw invalid_argument("ps client: " + std::to_string(shards.size()) + " shards but " +
                           std::to_string(names.size()) + " names");
  for (size_t i = 0; i < shards.size(); ++i) names_.emplace_back(shards[i], names[i]);
}

void PsClient::use_bulk(const caf::actor& shard, std::shared_ptr<PsBulkClient> bulk) {
  if (!shard || !bulk)
    throw invalid_argument("ps client: use_bulk needs a shard and a bulk client");
  bulk_.emplace_back(shard, std::move(bulk));
}

uint64_t PsClient::bulk_bytes_sent() const {
  uint64_t bytes = 0;
  for (auto& [shard, bulk] : bulk_) bytes += bulk->bytes_sent();
  return bytes;
}

uint64_t PsClient::bulk_bytes_received() const {
  uint64_t bytes = 0;
  for (auto& [shard, bulk] : bulk_) bytes += bulk->bytes_received();
  return bytes;
}

PsBulkClient* PsClient::bulk_for(const caf::actor& shard) const {
  // A shard of this process gets the tensor handle itself through CAF: nothing to move.
  if (!shard || shard.node() == sys_->node()) return nullptr;
  for (auto& [s, b] : bulk_)
    if (s == shard) return b.get();
  return nullptr;
}

std::vector<Tensor> PsClient::read_all(
    const std::vector<std::pair<caf::actor, ps_read_msg>>& reads) const {
  std::vector<Tensor> out;
  if (reads.empty()) return out;
  for (auto& v : ask_routed<ps_value_msg>(*sys_, timeout_, reads, names_, failover_,
                                          [this](const caf::actor& a) { return bulk_for(a); }))
    out.push_back(std::move(v.value));
  return out;
}

std::vector<Tensor> PsClient::gather_all(
    const std::vector<std::pair<caf::actor, ps_gather_msg>>& gathers, uint64_t row_bytes) const {
  std::vector<Tensor> out;
  if (gathers.empty()) return out;
  for (auto& v : ask_routed<ps_value_msg>(
           *sys_, timeout_, gathers, names_, failover_,
           [this](const caf::actor& a) { return bulk_for(a); }, row_bytes))
    out.push_back(std::move(v.value));
  return out;
}

std::vector<ps_ack_msg> PsClient::apply_all(
    const std::vector<std::pair<caf::actor, ps_apply_msg>>& steps) const {
  if (steps.empty()) return {};
  return ask_routed<ps_ack_msg>(*sys_, timeout_, steps, names_, failover_,
                                [this](const caf::actor& a) { return bulk_for(a); });
}

std::vector<ps_checkpoint_msg> PsClient::save_all(
    const std::vector<std::pair<caf::actor, ps_save_msg>>& saves) const {
  if (saves.empty()) return {};
  return ask_all<ps_checkpoint_msg>(*sys_, timeout_, saves, names_, failover_);
}

std::vector<ps_ack_msg> PsClient::restore_all(
    const std::vector<std::pair<caf::actor, ps_checkpoint_msg>>& restores) const {
  if (restores.empty()) return {};
  return ask_all<ps_ack_msg>(*sys_, timeout_, restores, names_, failover_);
}

std::vector<ps_ack_msg> PsClient::write_all(
    const std::vector<std::pair<caf::actor, ps_write_msg>>& writes) const {
  if (writes.empty()) return {};
  return ask_routed<ps_ack_msg>(*sys_, timeout_, writes, names_, failover_,
                                [this](const caf::actor& a) { return bulk_for(a); });
}

}  // namespace troupe
