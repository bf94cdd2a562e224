#pragma once
// Builds a troupe node's CAF configuration in code. cfg.parse() is never called: it would read
// caf-application.ini from the working directory behind the user's back.

#include <cstddef>

#include <caf/actor_system_config.hpp>

namespace troupe {

/// Options for configure_actor_system.
struct ActorSystemOptions {
  size_t scheduler_threads = 0;  ///< 0 = std::thread::hardware_concurrency()
  bool load_middleman = true;    ///< needed for publish / remote_actor
  size_t aggressive_poll_attempts =
      1000;  ///< busy polls of an idle scheduler worker before it sleeps
};

/// Registers all message types, sets scheduler.max-threads and loads the middleman.
void configure_actor_system(caf::actor_system_config& cfg, const ActorSystemOptions& options = {});

}  // namespace troupe
