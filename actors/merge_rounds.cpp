#include "actors/merge_rounds.hpp"

#include <algorithm>

namespace troupe {

std::optional<MergeOutcome> MergeSlot::take_answer(uint64_t step, uint32_t call,
                                                   std::chrono::steady_clock::time_point deadline) {
  {
    std::lock_guard<std::mutex> lock(waiting_mutex);
    if (failed) {
      MergeOutcome outcome;
      outcome.status = *failed;
      outcome.step = step;
      outcome.call = call;
      return outcome;
    }
    waiting = {step, call};
  }
  std::optional<MergeOutcome> outcome;
  for (;;) {
    outcome = reply.take(deadline - std::chrono::steady_clock::now());
    if (!outcome || (outcome->step == step && outcome->call == call)) break;
  }
  std::lock_guard<std::mutex> lock(waiting_mutex);
  waiting.reset();
  return outcome;
}

void MergeSlot::fail_waiting(const Status& why) {
  std::lock_guard<std::mutex> lock(waiting_mutex);
  if (!failed) failed = why;
  if (!waiting) return;
  MergeOutcome outcome;
  outcome.status = why;
  std::tie(outcome.step, outcome.call) = *waiting;
  reply.put(std::move(outcome));
}

MergeRounds::MergeRounds(std::vector<MergeSlot>& slots, std::chrono::milliseconds timeout)
    : slots_(slots),
      timeout_(timeout),
      logic_(int(slots.size())),
      args_(slots.size()),
      arrived_round_(slots.size(), {0, 0}) {}

void MergeRounds::answer(int replica, MergeOutcome outcome) {
  std::tie(outcome.step, outcome.call) = arrived_round_[size_t(replica)];
  slots_[size_t(replica)].reply.put(std::move(outcome));
}

void MergeRounds::apply(MergeBarrier::Decision d) {
  if (d.action != MergeBarrier::Action::fail) return;
  for (int r : d.replicas) {
    MergeOutcome outcome;
    outcome.status = Status(d.code, d.error);
    answer(r, std::move(outcome));
    args_[size_t(r)].clear();
  }
  // The round ended: drop what replica 0's merge function captured from its frame.
  if (!logic_.round_open()) zero_runner_ = nullptr;
}

MergeTurn MergeRounds::arrive(int replica, uint64_t step, uint32_t call, const std::string& tag,
                              std::vector<Tensor> args, MergeRunner runner) {
  MergeTurn turn;
  std::lock_guard<std::mutex> lock(mutex_);
  const bool was_open = logic_.round_open();
  if (replica >= 0 && replica < int(slots_.size())) {
    args_[size_t(replica)] = std::move(args);
    arrived_round_[size_t(replica)] = {step, call};
    if (replica == 0) zero_runner_ = std::move(runner);
  }
  auto d = logic_.arrive(replica, step, call, tag);
  if (!was_open && logic_.round_open()) {
    opened_ = std::chrono::steady_clock::now();
    ++rounds_opened_;
    turn.arm_timer = !timer_pending_;
    timer_pending_ = true;
  }
  if (d.action != MergeBarrier::Action::run_merge) {
    apply(std::move(d));
    return turn;
  }
  // Every replica arrived, this one last: it runs the merge. Replica 0 arrived too, so its merge
  // function is here (run_merge names every replica of the group).
  turn.run_merge = true;
  turn.runner = std::move(zero_runner_);
  zero_runner_ = nullptr;
  turn.args = std::exchange(args_, std::vector<std::vector<Tensor>>(slots_.size()));
  turn.replicas = std::move(d.replicas);
  return turn;
}

void MergeRounds::finished(int replica, uint64_t step, uint32_t merge_calls) {
  std::lock_guard<std::mutex> lock(mutex_);
  apply(logic_.finished(replica, step, merge_calls));
}

void MergeRounds::failed(int replica, uint64_t step, const std::string& what) {
  std::lock_guard<std::mutex> lock(mutex_);
  apply(logic_.failed(replica, step, what));
}

std::optional<std::chrono::steady_clock::duration> MergeRounds::timer_fired() {
  std::lock_guard<std::mutex> lock(mutex_);
  const bool active = rounds_opened_ != rounds_opened_at_last_firing_;
  rounds_opened_at_last_firing_ = rounds_opened_;
  timer_pending_ = false;
  if (logic_.round_open()) {
    const auto waited = std::chrono::steady_clock::now() - opened_;
    if (waited < timeout_) {
      timer_pending_ = true;  // time the open round from its own start
      return timeout_ - waited;
    }
    const auto waited_ms = std::chrono::duration_cast<std::chrono::milliseconds>(waited);
    apply(logic_.timeout(logic_.step(), logic_.call(), waited_ms.count()));
    return std::nullopt;
  }
  // Rounds keep opening and closing: stay armed, so that they need not message the barrier.
  if (!active) return std::nullopt;
  timer_pending_ = true;
  return std::chrono::steady_clock::duration(timeout_);
}

}  // namespace troupe
