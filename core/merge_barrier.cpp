#include "core/merge_barrier.hpp"

#include <algorithm>

#include "core/status.hpp"

namespace troupe {
namespace {

std::string list(const std::vector<int>& ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + std::to_string(ids[i]);
  return s + "]";
}

}  // namespace

MergeBarrier::MergeBarrier(int replicas) : n_(replicas), finished_calls_(size_t(replicas), -1) {
  if (replicas < 1) throw invalid_argument("a merge barrier needs at least one replica");
}

void MergeBarrier::start_step(uint64_t step) {
  step_ = step;
  step_started_ = true;
  call_ = 0;
  tag_.clear();
  waiting_.clear();
  std::fill(finished_calls_.begin(), finished_calls_.end(), -1);
  step_error_.clear();
}

std::string MergeBarrier::describe_round() const {
  return "step " + std::to_string(step_) + ", merge_call " + std::to_string(call_) + " (tag '" +
         tag_ + "')";
}

MergeBarrier::Decision MergeBarrier::fail_waiting(std::string error, int also, Code code) {
  Decision d{Action::fail, waiting_, std::move(error), code};
  if (also >= 0 && std::find(d.replicas.begin(), d.replicas.end(), also) == d.replicas.end())
    d.replicas.push_back(also);
  step_error_ = d.error;
  waiting_.clear();
  return d;
}

MergeBarrier::Decision MergeBarrier::arrive(int replica, uint64_t step, uint32_t call,
                                            const std::string& tag) {
  if (replica < 0 || replica >= n_)
    return {Action::fail, {}, "merge_call from unknown replica " + std::to_string(replica)};
  if (!step_started_ || step > step_) start_step(step);
  if (step < step_)
    return {Action::fail,
            {replica},
            "replica " + std::to_string(replica) + " arrived at merge_call for step " +
                std::to_string(step) + " but the group is at step " + std::to_string(step_)};
  if (!step_error_.empty()) return {Action::fail, {replica}, step_error_};
  if (std::find(waiting_.begin(), waiting_.end(), replica) != waiting_.end())
    return fail_waiting("replica " + std::to_string(replica) + " arrived twice at " +
                        describe_round());
  if (waiting_.empty()) {
    call_ = call;
    tag_ = tag;
    for (int r = 0; r < n_; ++r)
      if (finished_calls_[size_t(r)] >= 0 && uint32_t(finished_calls_[size_t(r)]) <= call)
        return fail_waiting("replicas made different numbers of merge_call calls: replica " +
                                std::to_string(r) + " finished step " + std::to_string(step_) +
                                " after " + std::to_string(finished_calls_[size_t(r)]) +
                                " merge_call(s) while replica " + std::to_string(replica) +
                                " waits at " + describe_round(),
                            replica);
  } else if (call != call_ || tag != tag_) {
    return fail_waiting("merge_call mismatch at step " + std::to_string(step_) + ": replica " +
                            std::to_string(waiting_.front()) + " is at merge_call " +
                            std::to_string(call_) + " (tag '" + tag_ + "') but replica " +
                            std::to_string(replica) + " is at merge_call " + std::to_string(call) +
                            " (tag '" + tag + "')",
                        replica);
  }
  waiting_.push_back(replica);
  if (int(waiting_.size()) < n_) return {};
  Decision d{Action::run_merge, std::move(waiting_), {}};
  std::sort(d.replicas.begin(), d.replicas.end());
  waiting_.clear();
  ++call_;
  tag_.clear();
  return d;
}

MergeBarrier::Decision MergeBarrier::finished(int replica, uint64_t step, uint32_t merge_calls) {
  if (!step_started_ || step > step_) start_step(step);
  if (step < step_ || replica < 0 || replica >= n_) return {};
  finished_calls_[size_t(replica)] = int(merge_calls);
  if (waiting_.empty()) return {};
  return fail_waiting("replicas made different numbers of merge_call calls: replica " +
                      std::to_string(replica) + " finished step " + std::to_string(step_) +
                      " after " + std::to_string(merge_calls) + " merge_call(s) while replicas " +
                      list(waiting_) + " wait at " + describe_round());
}

MergeBarrier::Decision MergeBarrier::failed(int replica, uint64_t step, const std::string& what) {
  if (!step_started_ || step > step_) start_step(step);
  if (step < step_) return {};
  if (!step_error_.empty()) return {};  // keep the root cause, not the echo of it
  return fail_waiting("replica " + std::to_string(replica) + " failed at step " +
                      std::to_string(step) + ": " + what);
}

MergeBarrier::Decision MergeBarrier::timeout(uint64_t step, uint32_t call, int64_t waited_ms) {
  if (step != step_ || call != call_ || waiting_.empty()) return {};  // round already done
  std::vector<int> missing;
  for (int r = 0; r < n_; ++r)
    if (std::find(waiting_.begin(), waiting_.end(), r) == waiting_.end()) missing.push_back(r);
  auto arrived = waiting_;
  std::sort(arrived.begin(), arrived.end());
  return fail_waiting("merge_call timed out after " + std::to_string(waited_ms) + " ms at " +
                          describe_round() + ": replica(s) " + list(missing) +
                          " did not arrive (arrived: " + list(arrived) + ")",
                      -1, Code::deadline_exceeded);
}

}  // namespace troupe
