#include "coordinator/ps/ps_client.hpp"

#include <optional>

#include <caf/all.hpp>

#include "messages/error_channel.hpp"

namespace troupe {
namespace {

// Sends every request, then receives every reply: the receivers work concurrently. The first
// error is thrown after all replies are in, so no reply outlives the scoped actor.
template <class Reply, class Msg>
std::vector<Reply> ask_all(caf::actor_system& sys, std::chrono::milliseconds timeout,
                           const std::vector<std::pair<caf::actor, Msg>>& requests) {
  caf::scoped_actor self{sys};
  using handle = decltype(self->request(requests[0].first, timeout, requests[0].second));
  std::vector<handle> pending;
  pending.reserve(requests.size());
  for (auto& [to, msg] : requests) {
    if (!to) throw invalid_argument("ps request to an empty actor handle");
    pending.push_back(self->request(to, timeout, msg));
  }
  std::vector<Reply> replies(requests.size());
  std::optional<Status> failure;
  for (size_t i = 0; i < pending.size(); ++i)
    pending[i].receive([&](Reply& r) { replies[i] = std::move(r); },
                       [&](caf::error& e) {
                         if (!failure) failure = to_status(e);
                       });
  if (failure) failure->throw_if_error();
  return replies;
}

template <class Reply, class Msg>
Reply ask_one(caf::actor_system& sys, std::chrono::milliseconds timeout, const caf::actor& to,
              const Msg& msg) {
  return ask_all<Reply, Msg>(sys, timeout, {{to, msg}}).at(0);
}

}  // namespace

PsClient::PsClient(caf::actor_system& sys, std::chrono::milliseconds timeout)
    : sys_(&sys), timeout_(timeout) {}

void PsClient::create(const caf::actor& shard, const ps_create_msg& msg) const {
  ask_one<ps_ack_msg>(*sys_, timeout_, shard, msg);
}

Tensor PsClient::read(const caf::actor& shard, const std::string& name) const {
  return ask_one<ps_value_msg>(*sys_, timeout_, shard, ps_read_msg{name}).value;
}

ps_ack_msg PsClient::write(const caf::actor& shard, const ps_write_msg& msg) const {
  return ask_one<ps_ack_msg>(*sys_, timeout_, shard, msg);
}

ps_ack_msg PsClient::apply(const caf::actor& shard, const ps_apply_msg& msg) const {
  return ask_one<ps_ack_msg>(*sys_, timeout_, shard, msg);
}

ps_checkpoint_msg PsClient::save(const caf::actor& shard, const ps_save_msg& msg) const {
  return ask_one<ps_checkpoint_msg>(*sys_, timeout_, shard, msg);
}

ps_ack_msg PsClient::restore(const caf::actor& shard, const ps_checkpoint_msg& msg) const {
  return ask_one<ps_ack_msg>(*sys_, timeout_, shard, msg);
}

std::vector<Tensor> PsClient::read_all(
    const std::vector<std::pair<caf::actor, ps_read_msg>>& reads) const {
  std::vector<Tensor> out;
  if (reads.empty()) return out;
  for (auto& v : ask_all<ps_value_msg>(*sys_, timeout_, reads)) out.push_back(std::move(v.value));
  return out;
}

std::vector<Tensor> PsClient::gather_all(
    const std::vector<std::pair<caf::actor, ps_gather_msg>>& gathers) const {
  std::vector<Tensor> out;
  if (gathers.empty()) return out;
  for (auto& v : ask_all<ps_value_msg>(*sys_, timeout_, gathers)) out.push_back(std::move(v.value));
  return out;
}

std::vector<ps_ack_msg> PsClient::apply_all(
    const std::vector<std::pair<caf::actor, ps_apply_msg>>& steps) const {
  if (steps.empty()) return {};
  return ask_all<ps_ack_msg>(*sys_, timeout_, steps);
}

std::vector<ps_checkpoint_msg> PsClient::save_all(
    const std::vector<std::pair<caf::actor, ps_save_msg>>& saves) const {
  if (saves.empty()) return {};
  return ask_all<ps_checkpoint_msg>(*sys_, timeout_, saves);
}

std::vector<ps_ack_msg> PsClient::restore_all(
    const std::vector<std::pair<caf::actor, ps_checkpoint_msg>>& restores) const {
  if (restores.empty()) return {};
  return ask_all<ps_ack_msg>(*sys_, timeout_, restores);
}

std::vector<ps_ack_msg> PsClient::write_all(
    const std::vector<std::pair<caf::actor, ps_write_msg>>& writes) const {
  if (writes.empty()) return {};
  return ask_all<ps_ack_msg>(*sys_, timeout_, writes);
}

}  // namespace troupe
