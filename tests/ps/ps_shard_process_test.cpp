// A ps_shard in another process (this test binary started again as a child through
// net/child_process): a step retried from a second client after the first went away is applied
// once, and a ps process killed with SIGKILL turns the next request into an error, not a hang.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <iostream>

#include "coordinator/ps/ps_client.hpp"
#include "net/child_process.hpp"
#include "net/gatekeeper.hpp"
#include "net/tls_transport.hpp"
#include "net/wire_client.hpp"
#include "ps_test_support.hpp"

using namespace troupe;
using namespace troupe::testing;

namespace {

constexpr const char* kServeVariable = "TROUPE_TEST_PS_SHARD_SERVE";
constexpr const char* kSecret = "ps-process-secret";

ActorSystemOptions networked() {
  ActorSystemOptions o;
  o.scheduler_threads = 2;
  return o;
}

// The parent's side of one ps process: started, its port read from its first line.
struct PsProcess {
  ChildProcess child{current_executable(),
                     {"--gtest_filter=PsShardProcess.ChildServesAShardUntilStdinCloses"},
                     {std::string(kServeVariable) + "=1"}};
  uint16_t port = 0;

  PsProcess() {
    for (int i = 0; i < 50 && port == 0; ++i) {
      auto line = child.read_line(std::chrono::seconds(30));
      if (!line) break;
      if (line->rfind("PS_SHARD_PORT ", 0) == 0) port = uint16_t(std::stoi(line->substr(14)));
    }
  }
};

caf::actor connect(caf::actor_system& sys, uint16_t port) {
  WireClientOptions o;
  o.port = port;
  o.secret = kSecret;
  return connect_to_service(sys, o);
}

UpdateRule sgd() {
  UpdateRule r;
  r.learning_rate = 1;
  return r;
}

}  // namespace

// The child's entry point: runs only in the process the tests below start.
TEST(PsShardProcess, ChildServesAShardUntilStdinCloses) {
  if (!std::getenv(kServeVariable)) GTEST_SKIP() << "entry point of the ps child process";
  caf::actor_system_config cfg;
  configure_actor_system(cfg, networked());
  caf::actor_system sys{cfg};
  caf::actor shard = spawn_ps_shard(sys, {"ps:0", cpu_kernels()});
  caf::actor gate = spawn_gatekeeper(sys, kSecret, shard);
  auto port = publish_actor(sys, gate, 0, "127.0.0.1", false);
  ASSERT_TRUE(port);
  std::cout << "PS_SHARD_PORT " << *port << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
  }
  caf::anon_send_exit(gate, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(shard, caf::exit_reason::user_shutdown);
}

TEST(PsShardProcess, AStepRetriedByAnotherClientIsAppliedOnce) {
  PsProcess ps;
  ASSERT_NE(ps.port, 0) << ps.child.err();
  {
    // The first worker creates the variable, pushes step 7, and goes away.
    caf::actor_system_config cfg;
    configure_actor_system(cfg, networked());
    caf::actor_system first{cfg};
    caf::actor shard = connect(first, ps.port);
    ask<ps_ack_msg>(first, shard, ps_create_msg{{"w", "", {}, {}}, floats({2}, {0, 0})});
    auto ack = ask<ps_ack_msg>(
        first, shard, ps_apply_msg{"w", 7, to_rule_msg(sgd()), {}, floats({2}, {1, 2}), {}});
    EXPECT_TRUE(ack.applied);
  }
  // The step is rescheduled on another worker, which sends it again.
  caf::actor_system_config cfg;
  configure_actor_system(cfg, networked());
  caf::actor_system second{cfg};
  caf::actor shard = connect(second, ps.port);
  auto retry = ask<ps_ack_msg>(
      second, shard, ps_apply_msg{"w", 7, to_rule_msg(sgd()), {}, floats({2}, {1, 2}), {}});
  EXPECT_FALSE(retry.applied);
  EXPECT_EQ(retry.updates, 1u);
  EXPECT_EQ(ask<ps_value_msg>(second, shard, ps_read_msg{"w"}).value.to_vector<float>(),
            (std::vector<float>{-1, -2}));
  ps.child.close_stdin();
  EXPECT_EQ(ps.child.wait(std::chrono::seconds(30)), 0) << ps.child.err();
}

TEST(PsShardProcess, AKilledPsProcessFailsTheNextRequest) {
  PsProcess ps;
  ASSERT_NE(ps.port, 0) << ps.child.err();
  caf::actor_system_config cfg;
  configure_actor_system(cfg, networked());
  caf::actor_system sys{cfg};
  caf::actor shard = connect(sys, ps.port);
  PsClient client(sys, std::chrono::seconds(5));
  client.create(shard, ps_create_msg{{"w", "", {}, {}}, floats({1}, {1})});
  ps.child.signal(SIGKILL);
  ps.child.wait(std::chrono::seconds(30));
  try {
    client.read(shard, "w");
    FAIL() << "a read from a killed ps process succeeded";
  } catch (const Error& e) {
    // The client monitors the shards it waits on: the lost connection fails the request with
    // a named error as soon as CAF notices, not at the request timeout.
    EXPECT_EQ(e.code(), Code::unavailable) << e.what();
    EXPECT_NE(std::string(e.what()).find("ps shard serving variable 'w' went away: "),
              std::string::npos)
        << e.what();
  }
}
