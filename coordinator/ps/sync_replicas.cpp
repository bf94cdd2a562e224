#include "coordinator/ps/sync_replicas.hpp"

#include <deque>
#include <optional>

#include <caf/all.hpp>

#include "core/status.hpp"
#include "kernels/ops.hpp"
#include "messages/error_channel.hpp"
#include "messages/sync_replicas_messages.hpp"
#include "messages/tensor_wire.hpp"
#include "messages/timed_request.hpp"

namespace troupe {

namespace {

using take_token_atom = caf::atom_constant<caf::atom("taketoken")>;
using step_applied_atom = caf::atom_constant<caf::atom("stepappl")>;
using sync_stats_atom = caf::atom_constant<caf::atom("syncstats")>;
using lost_tokens_atom = caf::atom_constant<caf::atom("losttokns")>;
using restore_step_atom = caf::atom_constant<caf::atom("syncrestor")>;

struct SyncState {
  SyncState(SyncReplicasPlan p, std::shared_ptr<const KernelRegistry> k)
      : plan(p), accumulator(p), kernels(std::move(k)) {}
  SyncReplicasPlan plan;
  SyncAccumulator accumulator;
  TokenQueue tokens;
  std::deque<caf::response_promise> waiting;  // workers waiting for a token
  std::shared_ptr<const KernelRegistry> kernels;
  std::vector<Tensor> sums;                  // dense sums (undefined for row gradients)
  std::vector<std::vector<Tensor>> row_ids;  // row gradients: every accepted offer's rows
  std::vector<std::vector<Tensor>> row_values;
  int64_t tokens_to_release = 0;
  bool in_step = false;  // a gradient of the current step was accepted

  void serve_waiting() {
    while (!waiting.empty()) {
      auto token = tokens.take();
      if (!token) return;
      waiting.front().deliver(*token);
      waiting.pop_front();
    }
  }

  // Throws invalid_argument when `m` does not match the step's earlier offers (nothing changes).
  void check(const sync_offer_msg& m) const {
    if (m.values.size() != m.indices.size())
      throw invalid_argument("sync offer: " + std::to_string(m.values.size()) + " gradients, " +
                             std::to_string(m.indices.size()) + " index tensors");
    if (!in_step) return;
    if (m.values.size() != sums.size())
      throw invalid_argument("sync offer of " + std::to_string(m.values.size()) +
                             " gradients for a step accumulating " + std::to_string(sums.size()));
    for (size_t k = 0; k < m.values.size(); ++k) {
      const Tensor& g = m.values[k];
      if (sums[k].defined() &&
          (m.indices[k].defined() || sums[k].shape() != g.shape() || sums[k].dtype() != g.dtype()))
        throw invalid_argument("sync offer: gradient " + std::to_string(k) + " is " +
                               g.description() + ", the step accumulates " + sums[k].description());
      if (!sums[k].defined() && !m.indices[k].defined())
        throw invalid_argument("sync offer: gradient " + std::to_string(k) +
                               " is dense, the step accumulates rows");
    }
  }

  void add(sync_offer_msg& m) {
    if (!in_step) {
      sums.assign(m.values.size(), Tensor());
      row_ids.assign(m.values.size(), {});
      row_values.assign(m.values.size(), {});
      in_step = true;
    }
    Ops ops(*kernels);
    for (size_t k = 0; k < m.values.size(); ++k) {
      if (m.indices[k].defined()) {
        row_ids[k].push_back(m.indices[k]);
        row_values[k].push_back(m.values[k]);
      } else if (!sums[k].defined()) {
        sums[k] = m.values[k].clone();
      } else {
        ops.add(sums[k], m.values[k], sums[k]);
      }
    }
  }

  // The mean of the accepted gradients: dense sums / R; row gradients concatenated, values / R
  // (duplicate rows add up when applied).
  void mean(sync_offer_reply_msg& out) {
    Ops ops(*kernels);
    const double r = double(plan.replicas_to_aggregate());
    for (size_t k = 0; k < sums.size(); ++k) {
      if (sums[k].defined()) {
        ops.scale(sums[k], 1.0 / r, sums[k]);
        out.values.push_back(sums[k]);
        out.indices.push_back(Tensor());
        continue;
      }
      int64_t n = 0;
      for (auto& ids : row_ids[k]) n += ids.shape()[0];
      const Tensor& first = row_values[k].at(0);
      std::vector<int64_t> dims = first.shape().dims();
      dims[0] = n;
      Tensor values(first.dtype(), Shape(dims));
      Tensor ids(DType::int64, Shape{n});
      int64_t at = 0;
      for (size_t j = 0; j < row_ids[k].size(); ++j) {
        const Tensor& part_ids = row_ids[k][j];
        const int64_t rows = part_ids.shape()[0];
        for (int64_t i = 0; i < rows; ++i)
          ids.data<int64_t>()[at + i] = part_ids.dtype() == DType::int64
                                            ? part_ids.data<int64_t>()[i]
                                            : int64_t(part_ids.data<int32_t>()[i]);
        Tensor dst = values.slice_rows(at, at + rows);
        ops.copy(row_values[k][j], dst);
        at += rows;
      }
      ops.scale(values, 1.0 / r, values);
      out.values.push_back(values);
      out.indices.push_back(ids);
    }
    sums.clear();
    row_ids.clear();
    row_values.clear();
    in_step = false;
  }
};

caf::behavior sync_replicas_actor(caf::stateful_actor<std::shared_ptr<SyncState>>* self,
                                  std::shared_ptr<SyncState> state) {
  self->state = state;
  state->tokens.put(state->plan.initial_tokens(), 0);
  return {
      [self](take_token_atom) -> caf::result<int64_t> {
        auto& s = *self->state;
        if (auto token = s.tokens.take()) return *token;
        s.waiting.push_back(self->make_response_promise());
        return caf::delegated<int64_t>();
      },
      [self](sync_offer_msg& m) -> caf::result<sync_offer_reply_msg> {
        auto& s = *self->state;
        sync_offer_reply_msg reply;
        reply.global_step = s.accumulator.global_step();
        try {
          s.check(m);
          if (!s.accumulator.offer(m.local_step)) return reply;  // stale: dropped
          s.add(m);
        } catch (const Error& e) {
          return to_caf_error(e.status());
        }
        reply.accepted = true;
        if (s.accumulator.ready()) {
          s.mean(reply);
          s.tokens_to_release = s.accumulator.take();
          reply.apply = true;
        }
        return reply;
      },
      [self](step_applied_atom, int64_t step) {
        auto& s = *self->state;
        if (s.tokens_to_release > 0 && step + 1 == s.accumulator.global_step()) {
          s.tokens.put(s.tokens_to_release, s.accumulator.global_step());
          s.tokens_to_release = 0;
          s.serve_waiting();
        }
      },
      // A lost worker may have taken tokens with it: put `n` back, of the current step. If it
      // was applying a step's mean (the step's tokens wait for that), it will never report the
      // step applied: the tokens are released now, and the rescheduled closure completes the
      // parts of the update the shards have not seen under its step id. A token too many costs
      // one more gradient of the step, or one dropped as stale.
      [self](lost_tokens_atom, int64_t n) {
        auto& s = *self->state;
        if (n <= 0) return;
        s.tokens.put(n + s.tokens_to_release, s.accumulator.global_step());
        s.tokens_to_release = 0;
        s.serve_waiting();
      },
      // Resume: only a queue no worker has touched (its initial tokens all there, nothing
      // offered) is replaced by the one of `step`'s boundary.
      [self](restore_step_atom, int64_t step) -> caf::result<bool> {
        auto& s = *self->state;
        const auto untouched = size_t(s.plan.initial_tokens());
        if (s.in_step || s.accumulator.accepted() > 0 || s.accumulator.dropped() > 0 ||
            s.accumulator.global_step() != 0 || s.tokens.size() != untouched || !s.waiting.empty())
          return to_caf_error(
              failed_precondition(
                  "the sync accumulator can be restored to global step " + std::to_string(step) +
                  " only before training: it is at global step " +
                  std::to_string(s.accumulator.global_step()) + " with " +
                  std::to_string(s.accumulator.accepted()) + " gradient(s) pending and " +
                  std::to_string(s.tokens.size()) + " token(s) queued")
                  .status());
        if (step < 0)
          return to_caf_error(
              invalid_argument("sync global step " + std::to_string(step) + " is negative")
                  .status());
        s.accumulator = SyncAccumulator(s.plan, step);
        s.tokens = TokenQueue();
        s.tokens.put(step == 0 ? s.plan.initial_tokens() : s.plan.tokens_per_step(), step);
        return true;
      },
      [self](sync_stats_atom) {
        auto& s = *self->state;
        return std::make_tuple(s.accumulator.global_step(), s.accumulator.dropped(),
                               s.accumulator.accepted());
      },
  };
}

template <class Reply, class... Ts>
Reply ask(caf::actor_system& sys, const caf::actor& to, std::chrono::milliseconds timeout,
          Ts&&... xs) {
  caf::scoped_actor self{sys};
  Reply out{};
  Status failure;
  timed_request(self, to, timeout, std::forward<Ts>(xs)...)
      .receive([&](Reply& r) { out = std::move(r); },
               [&](caf::error& e) { failure = to_status(e); });
  failure.throw_if_error();
  return out;
}

}  // namespace

SyncReplicas::SyncReplicas(caf::actor_system& system, SyncReplicasOptions options,
                           std::shared_ptr<const KernelRegistry> kernels,
                           std::chrono::milliseconds timeout)
    : system_(&system), plan_(options), timeout_(timeout) {
  if (!kernels) throw invalid_argument("SyncReplicas needs a kernel registry");
  actor_ =
      system.spawn(sync_replicas_actor, std::make_shared<SyncState>(plan_, std::move(kernels)));
}

SyncReplicas::SyncReplicas(caf::actor_system& system, caf::actor remote,
                           SyncReplicasOptions options, std::chrono::milliseconds timeout)
    : system_(&system), plan_(options), timeout_(timeout), actor_(std::move(remote)), owns_(false) {
  if (!actor_) throw invalid_argument("SyncReplicas: the accumulator handle is not valid");
}

SyncReplicas::~SyncReplicas() {
  if (owns_) caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
}

int64_t SyncReplicas::take_token() const {
  return ask<int64_t>(*system_, actor_, timeout_, take_token_atom::value);
}

void SyncReplicas::replace_lost_tokens(const caf::actor& accumulator, int64_t n) {
  if (accumulator && n > 0) caf::anon_send(accumulator, lost_tokens_atom::value, n);
}

SyncOffer SyncReplicas::offer(int64_t local_step, std::vector<SyncGradient> grads) const {
  sync_offer_msg m;
  m.local_step = local_step;
  for (auto& g : grads) {
    m.values.push_back(std::move(g.values));
    m.indices.push_back(std::move(g.indices));
  }
  auto r = ask<sync_offer_reply_msg>(*system_, actor_, timeout_, std::move(m));
  SyncOffer out{r.accepted, r.apply, r.global_step, {}};
  for (size_t k = 0; k < r.values.size(); ++k) out.mean.push_back({r.values[k], r.indices[k]});
  return out;
}

void SyncReplicas::applied(int64_t global_step) const {
  caf::anon_send(actor_, step_applied_atom::value, global_step);
}

void SyncReplicas::restore(int64_t global_step) const {
  caf::scoped_actor self{*system_};
  Status failure;
  timed_request(self, actor_, timeout_, restore_step_atom::value, global_step)
      .receive([](bool) {}, [&](caf::error& e) { failure = to_status(e); });
  failure.throw_if_error();
}

SyncReplicasStats SyncReplicas::stats() const {
  caf::scoped_actor self{*system_};
  SyncReplicasStats out;
  Status failure;
  timed_request(self, actor_, timeout_, sync_stats_atom::value)
      .receive(
          [&](int64_t step, int64_t dropped, int64_t accepted) {
            out = {step, dropped, accepted};
          },
          [&](caf::error& e) { failure = to_status(e); });
  failure.throw_if_error();
  return out;
}

}  // namespace troupe
