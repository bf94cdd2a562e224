// AggregatingVariable over a ps shard (spec variables.md R-AGG, T-AGG-1): two replicas each
// assign_add(1) in replica context; the shard receives one aggregated update per step.
#include "coordinator/ps/aggregating_variable.hpp"
#include "coordinator/ps/parameter_server_storage.hpp"
#include "ps_test_support.hpp"
#include "tests/common/error_of.hpp"
#include "tests/coordinator/fixture.hpp"

using namespace troupe;
using namespace troupe::testing;

namespace {

class AggregatingVariableTest : public StrategyTest {
 protected:
  AggregatingVariableTest()
      : shard(spawn_ps_shard(runtime.system(), {"ps:0", cpu_kernels()})),
        client(std::make_shared<PsClient>(runtime.system())) {}
  ~AggregatingVariableTest() override {
    caf::anon_send_exit(shard, caf::exit_reason::user_shutdown);
  }
  std::shared_ptr<ParameterServerStorage> on_ps(const std::string& name) {
    return ParameterServerStorage::create(client, shard, 0, name, scalar(0));
  }
  // Updates the shard applied to `name` so far.
  uint64_t updates_of(const std::string& name) {
    return client->save(shard, ps_save_msg{{name}}).variables.at(0).updates;
  }
  template <class Fn>
  void in_replicas(Strategy& s, Fn fn) {
    s.run([&](ReplicaContext&, const std::vector<Tensor>&) {
      fn();
      return std::vector<Tensor>{};
    });
  }

  caf::actor shard;
  std::shared_ptr<PsClient> client;
};

}  // namespace

TEST_F(AggregatingVariableTest, T_AGG_1_OneAggregatedUpdatePerStep) {
  const std::vector<std::pair<Aggregation, float>> cases = {
      {Aggregation::sum, 2}, {Aggregation::mean, 1}, {Aggregation::only_first_replica, 1}};
  for (auto& [agg, expected] : cases) {
    MirroredStrategy s(runtime.system(), cpus(2));
    const std::string name = "v_" + std::string(aggregation_name(agg));
    AggregatingVariable v(s, on_ps(name), agg);
    in_replicas(s, [&] { v.assign_add(scalar(1)); });
    EXPECT_EQ(value_of(v.value()), expected) << aggregation_name(agg);
    EXPECT_EQ(updates_of(name), 1u) << aggregation_name(agg);  // one update, not one per replica
  }
}

TEST_F(AggregatingVariableTest, T_AGG_1_NoneIsRefusedInReplicaContext) {
  MirroredStrategy s(runtime.system(), cpus(2));
  AggregatingVariable v(s, on_ps("n"), Aggregation::none);
  auto what = error_of([&] { in_replicas(s, [&] { v.assign_add(scalar(1)); }); });
  EXPECT_NE(what.find("AggregatingVariable 'n' cannot be updated in replica context with "
                      "aggregation NONE"),
            std::string::npos)
      << what;
  // Cross-replica updates need no aggregation and go straight to the shard.
  v.assign_add(scalar(3));
  v.assign_sub(scalar(1));
  EXPECT_EQ(value_of(v.value()), 2.f);
}

TEST_F(AggregatingVariableTest, WrapsOnlyAOneCopyVariable) {
  MirroredStrategy s(runtime.system(), cpus(2));
  auto scope = s.scope();
  auto mirrored = s.create_variable("m", scalar(0));
  EXPECT_EQ(error_of([&] {
              AggregatingVariable(
                  s, std::shared_ptr<VariableStorage>(&mirrored.storage(), [](VariableStorage*) {}),
                  Aggregation::sum);
            }),
            "AggregatingVariable wraps a variable that lives once; 'm' has 2 copies");
}

TEST_F(AggregatingVariableTest, R_PS_WRAP_OneReplicaWorkerUsesTheShardBehindADistributedVariable) {
  // With one replica per worker the ps variable needs no aggregation wrapper: a
  // DistributedVariable over its ParameterServerStorage reads and writes the shard directly.
  MirroredStrategy s(runtime.system(), cpus(1));
  DistributedVariable v(s, on_ps("plain"), Sync::on_write, Aggregation::none);
  EXPECT_EQ(v.devices(), (std::vector<std::string>{"/job:ps/replica:0/task:0/device:CPU:0"}));
  v.assign_add(scalar(2));  // cross-replica
  s.run([&](ReplicaContext&, const std::vector<Tensor>&) {
    v.assign_sub(scalar(0.5f));  // replica context, one replica
    return std::vector<Tensor>{v.value()};
  });
  EXPECT_EQ(value_of(v.value()), 1.5f);
  EXPECT_EQ(updates_of("plain"), 2u);
  EXPECT_EQ(error_of([&] { v.components(); }),
            "variable 'plain' lives on /job:ps/replica:0/task:0/device:CPU:0: it has no copy in "
            "this process to update in place");
}
