#pragma once
// One actor system with ps_shard actors, and a blocking client that asks them (tests only: a
// scoped_actor round trip is slow but simple).

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/ps_shard.hpp"
#include "core/ps/shard_write.hpp"
#include "core/status.hpp"
#include "messages/error_channel.hpp"
#include "messages/ps_messages.hpp"
#include "messages/system_config.hpp"

namespace troupe::testing {

/// Asks `shard` and returns its reply of type Reply; a reply error is thrown as troupe::Error
/// with the Code and message that crossed the error channel.
template <class Reply, class Msg>
Reply ask(caf::actor_system& sys, const caf::actor& shard, const Msg& msg) {
  caf::scoped_actor self{sys};
  Reply out;
  Status failure;
  self->request(shard, std::chrono::seconds(30), msg)
      .receive([&](Reply& r) { out = std::move(r); },
               [&](caf::error& e) { failure = to_status(e); });
  failure.throw_if_error();
  return out;
}

inline std::shared_ptr<const KernelRegistry> cpu_kernels() {
  return std::make_shared<const KernelRegistry>(make_cpu_registry());
}

inline Tensor floats(Shape shape, std::vector<float> values) {
  return Tensor::from_vector<float>(std::move(shape), values);
}

inline Tensor rows(std::vector<int64_t> r) {
  return Tensor::from_vector<int64_t>({int64_t(r.size())}, r);
}

/// A test with one in-process actor system and one ps_shard named "ps:0".
class PsShardTest : public ::testing::Test {
 protected:
  PsShardTest() {
    configure_actor_system(cfg_, ActorSystemOptions::in_process(2));
    sys_ = std::make_unique<caf::actor_system>(cfg_);
    shard = spawn_ps_shard(*sys_, {"ps:0", cpu_kernels()});
  }
  ~PsShardTest() override {
    caf::anon_send_exit(shard, caf::exit_reason::user_shutdown);
    shard = nullptr;
  }

  template <class Reply, class Msg>
  Reply ask(const Msg& msg, const caf::actor* to = nullptr) {
    return troupe::testing::ask<Reply>(*sys_, to ? *to : shard, msg);
  }
  ps_ack_msg create(const std::string& name, const Tensor& initial) {
    return ask<ps_ack_msg>(ps_create_msg{{name, "", {}, {}}, initial});
  }
  Tensor read(const std::string& name) { return ask<ps_value_msg>(ps_read_msg{name}).value; }
  ps_ack_msg write(const std::string& name, ShardWrite kind, Tensor value, Tensor indices = {},
                   uint64_t step = 0) {
    return ask<ps_ack_msg>(ps_write_msg{name, uint8_t(kind), step, indices, value});
  }
  ps_ack_msg apply(const std::string& name, const UpdateRule& rule, Tensor grad,
                   Tensor indices = {}, uint64_t step = 0) {
    return ask<ps_ack_msg>(ps_apply_msg{name, step, to_rule_msg(rule), indices, grad, {}});
  }

  caf::actor_system_config cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  caf::actor shard;
};

}  // namespace troupe::testing
