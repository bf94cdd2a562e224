#pragma once
// The first reason a collective group broke (a rank went down, stopped answering heartbeats, or
// its data connection failed), shared between the group's collective peer actor, which learns
// it, and threads that wait outside the actor (the shared-memory rendezvous of small
// all-reduces), which poll it so that they fail naming the rank instead of waiting out their
// timeout.

#include <atomic>
#include <mutex>
#include <string>

namespace troupe {

class GroupFailure {
 public:
  /// Records `why` unless a reason is already recorded (the first one names the cause).
  void set(const std::string& why) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (why_.empty()) why_ = why;
    failed_.store(true, std::memory_order_release);
  }
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  /// The recorded reason, empty while the group is whole.
  std::string why() const {
    if (!failed()) return {};
    std::lock_guard<std::mutex> lock(mutex_);
    return why_;
  }

 private:
  mutable std::mutex mutex_;
  std::string why_;
  std::atomic<bool> failed_{false};
};

}  // namespace troupe
