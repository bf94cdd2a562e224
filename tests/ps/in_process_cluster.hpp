#pragma once
// An in-process cluster for tests (as TF's tests make one): one actor system, `num_ps` ps_shard
// actors ("ps:0", ...) in it.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/ps_shard.hpp"
#include "messages/system_config.hpp"
#include "ps_test_support.hpp"

namespace troupe::testing {

class InProcessCluster : public ::testing::Test {
 protected:
  void start(int num_ps, int threads = 4) {
    configure_actor_system(cfg_, ActorSystemOptions::in_process(threads));
    sys_ = std::make_unique<caf::actor_system>(cfg_);
    for (int i = 0; i < num_ps; ++i)
      ps.push_back(spawn_ps_shard(*sys_, {"ps:" + std::to_string(i), cpu_kernels()}));
  }
  ~InProcessCluster() override {
    for (auto& a : ps) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    ps.clear();
  }

  caf::actor_system_config cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  std::vector<caf::actor> ps;
};

}  // namespace troupe::testing
