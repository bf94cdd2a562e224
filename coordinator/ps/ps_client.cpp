#include "coordinator/ps/ps_client.hpp"

#include <exception>
#include <future>
#include <memory>
#include <string>

#include <caf/all.hpp>

#include "coordinator/ps/ps_bulk_client.hpp"
#include "messages/error_channel.hpp"

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

// Sends every request at once from a short-lived event-based actor that monitors the shards:
// the shards work concurrently, and one that goes away (a killed ps process) fails the batch
// as soon as CAF notices, instead of at the request timeout. The caller waits for the batch.
template <class Reply, class Msg>
std::vector<Reply> ask_all(caf::actor_system& sys, std::chrono::milliseconds timeout,
                           const std::vector<std::pair<caf::actor, Msg>>& requests,
                           const std::vector<std::pair<caf::actor, std::string>>& names) {
  for (auto& r : requests)
    if (!r.first) throw invalid_argument("ps request to an empty actor handle");
  struct Batch {
    std::vector<Reply> replies;
    size_t left = 0;
    bool done = false;
    caf::typed_response_promise<std::vector<Reply>> promise;
  };
  // The requests and the timeout are arguments, not captures: CAF 0.17 binds a null tuple for
  // argument-less actor functions, which UBSan reports.
  using Requests = std::vector<std::pair<caf::actor, Msg>>;
  // What each shard is called in an error: its name when the client was given one.
  std::vector<std::string> labels;
  for (auto& r : requests) {
    std::string label = "ps shard";
    for (auto& [shard, name] : names)
      if (shard == r.first) label += " " + name;
    labels.push_back(label);
  }
  auto batch = sys.spawn(
      [](caf::event_based_actor* self, Requests requests, std::vector<std::string> labels,
         std::chrono::milliseconds timeout) -> caf::behavior {
        return {[=](caf::ok_atom) -> caf::result<std::vector<Reply>> {
          auto state = std::make_shared<Batch>();
          state->replies.resize(requests.size());
          state->left = requests.size();
          state->promise = self->make_response_promise<std::vector<Reply>>();
          auto fail = [=](caf::error e) {
            if (state->done) return;
            state->done = true;
            state->promise.deliver(std::move(e));
            self->quit();
          };
          self->set_down_handler([=](caf::down_msg& down) {
            for (size_t i = 0; i < requests.size(); ++i)
              if (requests[i].first.address() == down.source) {
                fail(to_caf_error(Status(Code::unavailable,
                                         labels[i] + " serving " + subject(requests[i].second) +
                                             " went away: " + describe_exit(down.reason))));
                return;
              }
          });
          for (size_t i = 0; i < requests.size(); ++i) {
            self->monitor(requests[i].first);
            self->request(requests[i].first, timeout, requests[i].second)
                .then(
                    [=](Reply& r) {
                      if (state->done) return;
                      state->replies[i] = std::move(r);
                      if (--state->left == 0) {
                        state->done = true;
                        state->promise.deliver(std::move(state->replies));
                        self->quit();
                      }
                    },
                    [=](caf::error& e) {
                      // A shard that is alive but silent (a stopped process, a cut link
                      // without a reset) is named like one that went away.
                      if (e == caf::sec::request_timeout)
                        e = to_caf_error(Status(Code::deadline_exceeded,
                                                labels[i] + " serving " +
                                                    subject(requests[i].second) +
                                                    " did not answer within " +
                                                    std::to_string(timeout.count()) + " ms"));
                      fail(e);
                    });
          }
          return state->promise;
        }};
      },
      requests, labels, timeout);
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
              const Msg& msg, const std::vector<std::pair<caf::actor, std::string>>& names) {
  return ask_all<Reply, Msg>(sys, timeout, {{to, msg}}, names).at(0);
}

// Which requests a bulk connection carries: pulls always (their size is not known before the
// reply), dense pushes and applies the bulk client takes; every other message stays on CAF.
bool via_bulk(const PsBulkClient&, const ps_read_msg&) { return true; }
bool via_bulk(const PsBulkClient& b, const ps_write_msg& m) { return b.carries(m); }
bool via_bulk(const PsBulkClient& b, const ps_apply_msg& m) { return b.carries(m); }
ps_value_msg send_bulk(PsBulkClient& b, const ps_read_msg& m) { return b.read(m); }
ps_ack_msg send_bulk(PsBulkClient& b, const ps_write_msg& m) { return b.write(m); }
ps_ack_msg send_bulk(PsBulkClient& b, const ps_apply_msg& m) { return b.apply(m); }

// ask_all, except that the requests a bulk connection carries go there, each on its own thread
// while the CAF batch runs on this one; replies in request order, the first failure thrown.
template <class Reply, class Msg, class BulkFor>
std::vector<Reply> ask_routed(caf::actor_system& sys, std::chrono::milliseconds timeout,
                              const std::vector<std::pair<caf::actor, Msg>>& requests,
                              const std::vector<std::pair<caf::actor, std::string>>& names,
                              BulkFor bulk_for) {
  std::vector<PsBulkClient*> bulk(requests.size(), nullptr);
  std::vector<std::pair<caf::actor, Msg>> by_caf;
  std::vector<size_t> caf_index;
  for (size_t i = 0; i < requests.size(); ++i) {
    PsBulkClient* b = bulk_for(requests[i].first);
    if (b && via_bulk(*b, requests[i].second)) {
      bulk[i] = b;
    } else {
      by_caf.push_back(requests[i]);
      caf_index.push_back(i);
    }
  }
  if (by_caf.size() == requests.size()) return ask_all<Reply, Msg>(sys, timeout, requests, names);
  std::vector<Reply> out(requests.size());
  if (by_caf.empty() && requests.size() == 1) {
    out[0] = send_bulk(*bulk[0], requests[0].second);
    return out;
  }
  std::vector<std::future<Reply>> pending(requests.size());
  for (size_t i = 0; i < requests.size(); ++i)
    if (bulk[i])
      pending[i] = std::async(std::launch::async,
                              [&, i] { return send_bulk(*bulk[i], requests[i].second); });
  std::exception_ptr failure;
  try {
    if (!by_caf.empty()) {
      auto replies = ask_all<Reply, Msg>(sys, timeout, by_caf, names);
      for (size_t k = 0; k < replies.size(); ++k) out[caf_index[k]] = std::move(replies[k]);
    }
  } catch (...) {
    failure = std::current_exception();
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    if (!pending[i].valid()) continue;
    try {
      out[i] = pending[i].get();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  return out;
}

}  // namespace

PsClient::PsClient(caf::actor_system& sys, std::chrono::milliseconds timeout)
    : sys_(&sys), timeout_(timeout) {}

void PsClient::create(const caf::actor& shard, const ps_create_msg& msg) const {
  ask_one<ps_ack_msg>(*sys_, timeout_, shard, msg, names_);
}

Tensor PsClient::read(const caf::actor& shard, const std::string& name) const {
  return ask_routed<ps_value_msg>(
             *sys_, timeout_,
             std::vector<std::pair<caf::actor, ps_read_msg>>{{shard, ps_read_msg{name}}}, names_,
             [this](const caf::actor& a) { return bulk_for(a); })
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
  return ask_one<ps_checkpoint_msg>(*sys_, timeout_, shard, msg, names_);
}

ps_ack_msg PsClient::restore(const caf::actor& shard, const ps_checkpoint_msg& msg) const {
  return ask_one<ps_ack_msg>(*sys_, timeout_, shard, msg, names_);
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
  for (auto& v : ask_routed<ps_value_msg>(*sys_, timeout_, reads, names_,
                                          [this](const caf::actor& a) { return bulk_for(a); }))
    out.push_back(std::move(v.value));
  return out;
}

std::vector<Tensor> PsClient::gather_all(
    const std::vector<std::pair<caf::actor, ps_gather_msg>>& gathers) const {
  std::vector<Tensor> out;
  if (gathers.empty()) return out;
  for (auto& v : ask_all<ps_value_msg>(*sys_, timeout_, gathers, names_))
    out.push_back(std::move(v.value));
  return out;
}

std::vector<ps_ack_msg> PsClient::apply_all(
    const std::vector<std::pair<caf::actor, ps_apply_msg>>& steps) const {
  if (steps.empty()) return {};
  return ask_routed<ps_ack_msg>(*sys_, timeout_, steps, names_,
                                [this](const caf::actor& a) { return bulk_for(a); });
}

std::vector<ps_checkpoint_msg> PsClient::save_all(
    const std::vector<std::pair<caf::actor, ps_save_msg>>& saves) const {
  if (saves.empty()) return {};
  return ask_all<ps_checkpoint_msg>(*sys_, timeout_, saves, names_);
}

std::vector<ps_ack_msg> PsClient::restore_all(
    const std::vector<std::pair<caf::actor, ps_checkpoint_msg>>& restores) const {
  if (restores.empty()) return {};
  return ask_all<ps_ack_msg>(*sys_, timeout_, restores, names_);
}

std::vector<ps_ack_msg> PsClient::write_all(
    const std::vector<std::pair<caf::actor, ps_write_msg>>& writes) const {
  if (writes.empty()) return {};
  return ask_routed<ps_ack_msg>(*sys_, timeout_, writes, names_,
                                [this](const caf::actor& a) { return bulk_for(a); });
}

}  // namespace troupe
