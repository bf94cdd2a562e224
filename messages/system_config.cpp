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
  if (options.load_middleman) cfg.load<caf::io::middleman>();
}

}  // namespace troupe
