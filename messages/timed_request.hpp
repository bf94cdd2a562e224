#pragma once
// Requests from blocking actors (a caf::scoped_actor, a replica thread's actor) whose wait for
// the answer carries the timeout, not the request.
//
// CAF 0.17 schedules a timeout message for every request sent with a timeout and never cancels
// it. An event-based actor drops that message when it comes after the answer; a blocking actor
// keeps it in its mailbox for good (TimedRequest.CafsOwnTimedRequestLeaves... shows it), and
// every later receive walks past all of them. A long-lived blocking actor that asks something
// every training step (an input pull, a collective with a peer) thus slowed down, and grew
// without bound, once a run outlived the timeout (docs/benchmarks.md, "Runs longer than a
// minute slowed down").
//
// So these requests go out without a timeout, and the wait enforces it: the answer must come
// within `timeout` of the request, as with CAF's own (an answer already in the mailbox is taken
// however late the caller looks, which is what requests sent ahead of their use need). An answer
// that comes after its wait gave up still arrives and stays in the mailbox: that happens only on
// a failure path, which ends the caller's work.

#include <algorithm>
#include <chrono>
#include <utility>

#include <caf/after.hpp>
#include <caf/blocking_actor.hpp>
#include <caf/error.hpp>
#include <caf/sec.hpp>

namespace troupe {

/// The answer to a timed_request, to be received once.
template <class Handle>
class TimedResponse {
 public:
  using Clock = std::chrono::steady_clock;

  TimedResponse(Handle handle, Clock::time_point deadline)
      : handle_(std::move(handle)), deadline_(deadline) {}

  /// Like the CAF handle's receive(on_value, on_error): on_value with the answer, or on_error
  /// with the error it carries, or with sec::request_timeout when the deadline passed without
  /// one.
  template <class OnValue, class OnError>
  void receive(OnValue on_value, OnError on_error) {
    // At least a microsecond: a zero wait still takes an answer that is already there.
    const auto left = std::max<std::chrono::nanoseconds>(
        std::chrono::microseconds(1),
        std::chrono::duration_cast<std::chrono::nanoseconds>(deadline_ - Clock::now()));
    caf::blocking_actor::accept_one_cond once;
    handle_.self()->varargs_receive(
        once, handle_.id(), std::move(on_value), [&on_error](caf::error& err) { on_error(err); },
        caf::after(left) >>
            [&on_error] {
              caf::error err = caf::make_error(caf::sec::request_timeout);
              on_error(err);
            });
  }

 private:
  Handle handle_;
  Clock::time_point deadline_;
};

/// `self->request(dest, timeout, xs...)` for a blocking actor (a caf::scoped_actor or a
/// caf::blocking_actor*), with the timeout on the wait (see the file comment).
template <class Self, class Dest, class Rep, class Period, class... Ts>
auto timed_request(Self& self, const Dest& dest, std::chrono::duration<Rep, Period> timeout,
                   Ts&&... xs) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto handle = self->request(dest, caf::infinite, std::forward<Ts>(xs)...);
  return TimedResponse<decltype(handle)>(std::move(handle), deadline);
}

}  // namespace troupe
