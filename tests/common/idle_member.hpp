#pragma once
// Member 1 of a WorkShare on its own thread, idle for the object's lifetime: it runs the other
// members' open blocks (or, with help = false, only counts as idle). The constructor returns once
// the member counts as idle, so a job started after it is cut.

#include <atomic>
#include <thread>

#include "core/work_share.hpp"

namespace troupe::testing {

class IdleMember {
 public:
  explicit IdleMember(WorkShare& share, bool help = true)
      : thread_([this, &share, help] {
          WorkShare::Member member(share, 1);
          WorkShare::Idle idle;
          idle_.store(true);
          while (!stop_.load())
            if (!(help && idle.help())) std::this_thread::yield();
        }) {
    while (!idle_.load()) std::this_thread::yield();
  }
  ~IdleMember() {
    stop_.store(true);
    thread_.join();
  }
  IdleMember(const IdleMember&) = delete;
  IdleMember& operator=(const IdleMember&) = delete;

 private:
  std::atomic<bool> stop_{false}, idle_{false};
  std::thread thread_;
};

}  // namespace troupe::testing
