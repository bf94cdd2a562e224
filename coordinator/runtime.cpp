#include "coordinator/runtime.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

namespace troupe {

struct Runtime::Impl {
  explicit Impl(const ActorSystemOptions& options) : system(configured(config, options)) {}
  static caf::actor_system_config& configured(caf::actor_system_config& cfg,
                                              const ActorSystemOptions& options) {
    configure_actor_system(cfg, options);
    return cfg;
  }
  caf::actor_system_config config;
  caf::actor_system system;
};

Runtime::Runtime(const ActorSystemOptions& options) : impl_(std::make_unique<Impl>(options)) {}
Runtime::~Runtime() = default;
caf::actor_system& Runtime::system() { return impl_->system; }

}  // namespace troupe
