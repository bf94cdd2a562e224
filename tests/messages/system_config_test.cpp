// The scheduler settings configure_actor_system writes are the ones its options ask for, and an
// actor system built with the training preset still answers once its workers sleep.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>

#include "messages/system_config.hpp"

using namespace troupe;
using namespace std::chrono_literals;

namespace {

caf::timespan idle_steal_period_of(const caf::actor_system_config& cfg) {
  return caf::get_or(cfg, "work-stealing.relaxed-sleep-duration", caf::timespan{0});
}

}  // namespace

TEST(SchedulerSettings, IdleWorkersStealEveryMillisecondByDefault) {
  caf::actor_system_config cfg;
  configure_actor_system(cfg, ActorSystemOptions::in_process(2));
  EXPECT_EQ(idle_steal_period_of(cfg), caf::timespan{1ms});
  EXPECT_EQ(caf::get_or(cfg, "scheduler.max-threads", size_t{0}), size_t{2});
  EXPECT_EQ(caf::get_or(cfg, "work-stealing.moderate-poll-attempts", size_t{99}), size_t{0});
}

TEST(SchedulerSettings, TheReplicaTrainingPresetWakesIdleWorkersEvery100Ms) {
  caf::actor_system_config cfg;
  configure_actor_system(cfg, ActorSystemOptions::for_replica_training());
  EXPECT_EQ(idle_steal_period_of(cfg), caf::timespan{100ms});
  // Everything else is the default node's: cores as scheduler threads, the middleman loaded.
  EXPECT_EQ(caf::get_or(cfg, "scheduler.max-threads", size_t{0}),
            size_t(std::max(1u, std::thread::hardware_concurrency())));
}

TEST(SchedulerSettings, ASystemWithTheTrainingPresetAnswersAfterItsWorkersFellAsleep) {
  // A sleeping worker is woken by the enqueue itself: the long steal period never delays a
  // message sent to an idle system (the round trip would otherwise wait up to 100 ms).
  caf::actor_system_config cfg;
  auto options = ActorSystemOptions::for_replica_training();
  options.load_middleman = false;
  configure_actor_system(cfg, options);
  caf::actor_system system{cfg};
  // Spawned with an argument: CAF 0.17 dereferences a null argument tuple for a function actor
  // spawned without any (UBSan stops the test there).
  auto echo = system.spawn(
      [](caf::event_based_actor*, int offset) -> caf::behavior {
        return {[offset](int x) { return x + offset; }};
      },
      1);
  caf::scoped_actor self{system};
  for (int round = 0; round < 3; ++round) {
    std::this_thread::sleep_for(20ms);  // let every worker fall asleep
    int answer = 0;
    self->request(echo, caf::infinite, round)
        .receive([&](int x) { answer = x; }, [&](caf::error& e) { FAIL() << system.render(e); });
    EXPECT_EQ(answer, round + 1);
  }
  self->send_exit(echo, caf::exit_reason::user_shutdown);
}
