// timed_request: a blocking actor's request whose timeout is enforced on the wait. It leaves no
// message behind in the actor's mailbox (CAF 0.17's own timed request does, one per request, for
// good), times out a silent actor at its deadline, reports a dead one, and takes an answer that
// arrived in time however late the caller looks for it.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include <caf/all.hpp>

#include "messages/system_config.hpp"
#include "messages/timed_request.hpp"

using namespace troupe;
using namespace std::chrono_literals;

namespace {

// (The actors take an argument: CAF 0.17 binds a null reference when it spawns a function actor
// without one, which the sanitizer build reports.)
caf::behavior echo(caf::event_based_actor*, int offset) {
  return {[offset](int x) { return x + offset; }};
}

// Takes every request and never answers it.
caf::behavior silent(caf::event_based_actor* self, int) {
  return {[=](int) -> caf::result<int> { return self->make_response_promise<int>(); }};
}

class TimedRequest : public ::testing::Test {
 protected:
  static caf::actor_system_config& configured(caf::actor_system_config& cfg) {
    configure_actor_system(cfg, ActorSystemOptions::in_process(1));
    return cfg;
  }
  caf::actor_system_config cfg;
  caf::actor_system sys{configured(cfg)};
};

TEST_F(TimedRequest, LeavesNoMessageBehindOnceItsTimeoutHasPassed) {
  auto answerer = sys.spawn(echo, 0);
  caf::scoped_actor self{sys};
  int sum = 0;
  for (int i = 0; i < 200; ++i)
    timed_request(self, answerer, 20ms, i)
        .receive([&](int x) { sum += x; },
                 [](caf::error& err) { ADD_FAILURE() << caf::to_string(err); });
  EXPECT_EQ(sum, 199 * 200 / 2);
  std::this_thread::sleep_for(150ms);  // past every request's timeout
  EXPECT_EQ(self->mailbox().size(), 0u);
  caf::anon_send_exit(answerer, caf::exit_reason::user_shutdown);
}

// Why timed_request exists: CAF 0.17's request with a timeout leaves its timeout message in a
// blocking actor's mailbox after the answer came. Should a CAF upgrade fail this test, the
// mailbox no longer keeps them and timed_request could hand the timeout back to CAF.
TEST_F(TimedRequest, CafsOwnTimedRequestLeavesOneMessagePerRequestInABlockingActor) {
  auto answerer = sys.spawn(echo, 0);
  caf::scoped_actor self{sys};
  for (int i = 0; i < 50; ++i)
    self->request(answerer, 20ms, i).receive([](int) {}, [](caf::error&) {});
  std::this_thread::sleep_for(150ms);
  EXPECT_EQ(self->mailbox().size(), 50u);
  caf::anon_send_exit(answerer, caf::exit_reason::user_shutdown);
}

TEST_F(TimedRequest, ASilentActorEndsTheWaitWithRequestTimeout) {
  auto quiet = sys.spawn(silent, 0);
  caf::scoped_actor self{sys};
  caf::error got;
  timed_request(self, quiet, 50ms, 1)
      .receive([](int) { ADD_FAILURE() << "a silent actor answered"; },
               [&](caf::error& err) { got = err; });
  EXPECT_EQ(got, caf::make_error(caf::sec::request_timeout));
  caf::anon_send_exit(quiet, caf::exit_reason::user_shutdown);
}

TEST_F(TimedRequest, ADeadActorIsReportedNotWaitedFor) {
  auto gone = sys.spawn(echo, 0);
  caf::scoped_actor self{sys};
  self->monitor(gone);
  caf::anon_send_exit(gone, caf::exit_reason::kill);
  self->receive([](const caf::down_msg&) {});
  caf::error got;
  timed_request(self, gone, 60s, 1)
      .receive([](int) { ADD_FAILURE() << "a dead actor answered"; },
               [&](caf::error& err) { got = err; });
  EXPECT_EQ(got, caf::make_error(caf::sec::request_receiver_down));
}

TEST_F(TimedRequest, AnAnswerThatArrivedInTimeIsTakenAfterTheDeadline) {
  auto answerer = sys.spawn(echo, 0);
  caf::scoped_actor self{sys};
  auto first = timed_request(self, answerer, 20ms, 7);
  // Through the actor pointer too (how a replica thread's actor calls it).
  caf::blocking_actor* raw = self.ptr();
  auto second = timed_request(raw, answerer, 20ms, 8);
  std::this_thread::sleep_for(100ms);  // both answers came long ago; both deadlines passed
  int a = 0, b = 0;
  first.receive([&](int x) { a = x; },
                [](caf::error& err) { ADD_FAILURE() << caf::to_string(err); });
  second.receive([&](int x) { b = x; },
                 [](caf::error& err) { ADD_FAILURE() << caf::to_string(err); });
  EXPECT_EQ(a, 7);
  EXPECT_EQ(b, 8);
  caf::anon_send_exit(answerer, caf::exit_reason::user_shutdown);
}

}  // namespace
