#pragma once
// A troupe process's actor system, configured in code (all message types registered, scheduler
// threads = cores, middleman loaded) — what a program or test creates once before strategies.

#include <memory>

#include <caf/fwd.hpp>

#include "messages/system_config.hpp"

namespace troupe {

/// Owns one CAF actor system.
class Runtime {
 public:
  explicit Runtime(const ActorSystemOptions& options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  caf::actor_system& system();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace troupe
