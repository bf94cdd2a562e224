// A ps_shard published behind a gatekeeper in one actor system and used over the middleman
// (127.0.0.1, an OS-chosen port) from another: every message and error crosses the wire.
#include <gtest/gtest.h>

#include "coordinator/ps/sharded_variable.hpp"
#include "net/gatekeeper.hpp"
#include "net/tls_transport.hpp"
#include "net/wire_client.hpp"
#include "ps_test_support.hpp"
#include "tests/common/error_of.hpp"

using namespace troupe;
using namespace troupe::testing;

namespace {

ActorSystemOptions networked() {
  ActorSystemOptions o;
  o.scheduler_threads = 2;
  return o;
}

}  // namespace

TEST(PsShardRemote, ServesAnotherActorSystemThroughAGatekeeper) {
  caf::actor_system_config server_cfg;
  configure_actor_system(server_cfg, networked());
  caf::actor_system server{server_cfg};
  caf::actor shard = spawn_ps_shard(server, {"ps:1", cpu_kernels()});
  caf::actor gate = spawn_gatekeeper(server, "ps-secret", shard);
  auto port = publish_actor(server, gate, 0, "127.0.0.1", false);
  ASSERT_TRUE(port) << to_status(port.error()).message();
  {
    caf::actor_system_config client_cfg;
    configure_actor_system(client_cfg, networked());
    caf::actor_system client{client_cfg};
    WireClientOptions o;
    o.port = *port;
    o.secret = "ps-secret";
    caf::actor remote = connect_to_service(client, o);

    // A part of a sharded embedding: rows [4, 8) of emb [8, 3].
    Tensor init = Tensor::from_vector<float>({4, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
    ask<ps_ack_msg>(client, remote, ps_create_msg{{"emb/part_1", "emb", {8, 3}, {4, 0}}, init});
    UpdateRule sgd;
    sgd.learning_rate = 1.0;
    auto ack = ask<ps_ack_msg>(
        client, remote,
        ps_apply_msg{"emb/part_1", 11, to_rule_msg(sgd), rows({3}), floats({1, 3}, {1, 1, 1}), {}});
    EXPECT_TRUE(ack.applied);
    auto again = ask<ps_ack_msg>(
        client, remote,
        ps_apply_msg{"emb/part_1", 11, to_rule_msg(sgd), rows({3}), floats({1, 3}, {1, 1, 1}), {}});
    EXPECT_FALSE(again.applied);  // the retry crossed the wire and was recognised
    auto got = ask<ps_value_msg>(client, remote, ps_gather_msg{"emb/part_1", rows({3, 0})});
    EXPECT_EQ(got.value.to_vector<float>(), (std::vector<float>{8, 9, 10, 0, 1, 2}));
    auto saved = ask<ps_checkpoint_msg>(client, remote, ps_save_msg{});
    ASSERT_EQ(saved.variables.size(), 1u);
    EXPECT_EQ(saved.variables[0].spec.offset, (std::vector<int64_t>{4, 0}));
    EXPECT_EQ(saved.variables[0].applied_sparse, (std::vector<uint64_t>{11}));

    // Errors keep their code and text across processes.
    try {
      ask<ps_value_msg>(client, remote, ps_gather_msg{"emb/part_1", rows({4})});
      FAIL();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::out_of_range);
      EXPECT_EQ(std::string(e.what()),
                "ps shard 'ps:1', variable 'emb/part_1' (rows [4, 8) of 'emb'): gather: row 4 "
                "is not in [0, 4)");
    }
    o.secret = "wrong";
    EXPECT_NE(error_of([&] { connect_to_service(client, o); }).find("authentication failed"),
              std::string::npos);
  }
  caf::anon_send_exit(gate, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(shard, caf::exit_reason::user_shutdown);
}

TEST(PsShardRemote, ShardedEmbeddingOverTwoRemoteShards) {
  // Two shards in one actor system, each behind its own gatekeeper; the coordinator side in
  // another creates, trains and looks up a sharded embedding through them.
  caf::actor_system_config server_cfg;
  configure_actor_system(server_cfg, networked());
  caf::actor_system server{server_cfg};
  std::vector<caf::actor> shards, gates;
  std::vector<uint16_t> ports;
  for (int i = 0; i < 2; ++i) {
    shards.push_back(spawn_ps_shard(server, {"ps:" + std::to_string(i), cpu_kernels()}));
    gates.push_back(spawn_gatekeeper(server, "ps-secret", shards.back()));
    auto port = publish_actor(server, gates.back(), 0, "127.0.0.1", false);
    ASSERT_TRUE(port) << to_status(port.error()).message();
    ports.push_back(*port);
  }
  {
    caf::actor_system_config client_cfg;
    configure_actor_system(client_cfg, networked());
    caf::actor_system client_sys{client_cfg};
    std::vector<caf::actor> remote;
    for (uint16_t port : ports) {
      WireClientOptions o;
      o.port = port;
      o.secret = "ps-secret";
      remote.push_back(connect_to_service(client_sys, o));
    }
    auto client = std::make_shared<PsClient>(client_sys);
    RoundRobinPlacement rr(2);
    std::vector<float> init;
    for (int r = 0; r < 7; ++r) init.insert(init.end(), {float(r), float(-r)});
    auto emb = ShardedVariable::create(client, remote, rr, "emb", floats({7, 2}, init), 2);
    EXPECT_EQ(emb.tasks(), (std::vector<int64_t>{0, 1}));
    UpdateRule sgd;
    sgd.learning_rate = 1;
    emb.apply_gradients(sgd, Tensor::from_vector<int64_t>({2}, {6, 0}),
                        floats({2, 2}, {1, 1, 1, 1}), 1);
    auto rows = emb.embedding_lookup(Tensor::from_vector<int64_t>({3}, {6, 3, 0}));
    EXPECT_EQ(rows.to_vector<float>(), (std::vector<float>{5, -7, 3, -3, -1, -1}));
    // The parts really live in the server's shards.
    auto local = std::make_shared<PsClient>(server);
    EXPECT_EQ(local->read(shards[1], "emb/part_1").shape(), Shape({3, 2}));
  }
  for (auto& a : gates) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  for (auto& a : shards) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}
