#include "messages/system_config.hpp"

#include <thread>

#include <caf/io/middleman.hpp>

#include "messages/type_ids.hpp"

namespace troupe {

void configure_actor_system(caf::actor_system_config& cfg, const ActorSystemOptions& options) {
  register_message_types(cfg);
  size_t threads = options.scheduler_threads;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  // CAF's default is max(cores, 4): 4 workers on a 2-core box were measurably slower.
  cfg.set("scheduler.max-threads", threads);
  // CAF 0.17's idle workers poll 100 times, then sleep 50 us between 500 more polls (a message
  // arriving then waits up to ~100 us: merge_call rounds measured 70-100 us), then sleep on a
  // condition variable and steal only every 10 ms (jobs queued behind a busy worker waited that
  // long: a 2-replica ring ran on one worker). Poll longer, skip the 50 us naps, and steal at
  // least every millisecond.
  cfg.set("work-stealing.aggressive-poll-attempts", options.aggressive_poll_attempts);
  cfg.set("work-stealing.moderate-poll-attempts", 0);
  cfg.set("work-stealing.relaxed-sleep-duration", caf::timespan{std::chrono::milliseconds(1)});
  if (options.load_middleman) cfg.load<caf::io::middleman>();
}

}  // namespace troupe
