// experimental_distribute_dataset across workers of MultiWorkerMirroredStrategy (spec §2.7.6-
// §2.8.4): two workers in one process, each with its own strategy and collective peer, the peers
// connected as between processes. Each worker must see exactly what input worker i sees when one
// process simulates W input workers (the in-process path the spec vectors test), and the end of
// the data is agreed: a worker without data feeds empty batches while the other still has some.
#include <future>

#include <caf/all.hpp>

#include "actors/collective_peer.hpp"
#include "coordinator/multi_worker_mirrored_strategy.hpp"
#include "messages/collective_messages.hpp"
#include "tests/input/input_test_util.hpp"

namespace troupe::testing {
namespace {

using data::AutoShardPolicy;
using data::Dataset;

// Two workers, one CPU replica each (or `replicas`), joined through local collective peers.
class CrossWorkerInput : public InputTest {
 protected:
  void SetUp() override {
    std::vector<caf::actor> peers{spawn_collective_peer(runtime.system()),
                                  spawn_collective_peer(runtime.system())};
    for (int r = 0; r < 2; ++r) caf::anon_send(peers[size_t(r)], collective_peers_msg{r, peers});
    peers_ = peers;
  }
  void TearDown() override {
    workers_.clear();
    for (auto& p : peers_) caf::anon_send_exit(p, caf::exit_reason::user_shutdown);
  }

  void make_workers(int replicas) {
    std::vector<std::string> devices;
    for (int i = 0; i < replicas; ++i) devices.push_back("CPU:" + std::to_string(i));
    for (int w = 0; w < 2; ++w)
      workers_.push_back(std::make_unique<MultiWorkerMirroredStrategy>(
          runtime.system(),
          peer_worker_collective(runtime.system(), peers_[size_t(w)], w,
                                 {"/job:worker/task:0", "/job:worker/task:1"}, {}),
          devices));
  }

  // Both workers drain their iterators at once (every step is a collective between them).
  std::vector<std::vector<StepValues>> drain_both(const Dataset& ds) {
    auto drain_worker = [&](int w) {
      auto dist = experimental_distribute_dataset(runtime.system(), *workers_[size_t(w)], ds);
      policies_[size_t(w)] = dist.applied_auto_shard_policies().at(0);
      return drain(dist);
    };
    auto first = std::async(std::launch::async, drain_worker, 0);
    auto second = drain_worker(1);
    return {first.get(), second};
  }

  std::vector<caf::actor> peers_;
  std::vector<std::unique_ptr<MultiWorkerMirroredStrategy>> workers_;
  AutoShardPolicy policies_[2] = {AutoShardPolicy::off, AutoShardPolicy::off};
};

// The in-process simulation's steps, split into worker w's replicas.
std::vector<StepValues> worker_share(const std::vector<StepValues>& steps, int w, int replicas) {
  std::vector<StepValues> out;
  for (auto& s : steps)
    out.push_back(StepValues(s.begin() + w * replicas, s.begin() + (w + 1) * replicas));
  return out;
}

TEST_F(CrossWorkerInput, TheIteratorCountsEveryWorkersReplicasInSync) {
  // num_replicas_in_sync is global (2 workers x 2 replicas, mirrored.md §2.5), as the strategy's
  // is.
  make_workers(2);
  auto ds = Dataset::range(0, 16).batch(8);
  auto dist = experimental_distribute_dataset(runtime.system(), *workers_[0], ds);
  auto it = dist.make_iterator();
  EXPECT_EQ(it.num_replicas_in_sync(), 4);
  EXPECT_EQ(workers_[0]->num_replicas_in_sync(), 4);
}

TEST_F(CrossWorkerInput, DataShardingGivesEachWorkerItsPiecesOfEveryGlobalBatch) {
  make_workers(1);
  EXPECT_EQ(workers_[0]->num_replicas_in_sync(), 2);
  // G = 4 over N = 2 replicas: legacy_rebatch(2) cuts each batch in two; worker i keeps piece i.
  auto ds = Dataset::range(0, 12).batch(4).with_auto_shard_policy(AutoShardPolicy::data);
  auto both = drain_both(ds);
  EXPECT_EQ(policies_[0], AutoShardPolicy::data);
  EXPECT_EQ(both[0], (std::vector<StepValues>{{{0, 1}}, {{4, 5}}, {{8, 9}}}));
  EXPECT_EQ(both[1], (std::vector<StepValues>{{{2, 3}}, {{6, 7}}, {{10, 11}}}));
}

TEST_F(CrossWorkerInput, EachWorkerSeesWhatInputWorkerISeesInOneProcess) {
  make_workers(2);
  for (auto policy : {AutoShardPolicy::data, AutoShardPolicy::off, AutoShardPolicy::file}) {
    SCOPED_TRACE(std::string(data::auto_shard_policy_name(policy)));
    std::vector<std::string> paths{write_int_file("a", 0, 8), write_int_file("b", 100, 8)};
    auto ds = int_files(paths).batch(4).with_auto_shard_policy(policy);
    auto expected = drain(distribute(4, ds, workers(2)));
    auto both = drain_both(ds);
    EXPECT_EQ(both[0], worker_share(expected, 0, 2));
    EXPECT_EQ(both[1], worker_share(expected, 1, 2));
  }
}

TEST_F(CrossWorkerInput, PartialLastBatchGivesTheWorkerWithoutDataEmptyBatchesThenBothEnd) {
  make_workers(1);
  // 9 elements, G = 4: the last global batch [8] is cut into [8] and an empty piece, so in the
  // third step worker 1 has no data while worker 0 has; after it both end together.
  auto ds = Dataset::range(0, 9).batch(4).with_auto_shard_policy(AutoShardPolicy::data);
  auto both = drain_both(ds);
  EXPECT_EQ(both[0], (std::vector<StepValues>{{{0, 1}}, {{4, 5}}, {{8}}}));
  EXPECT_EQ(both[1], (std::vector<StepValues>{{{2, 3}}, {{6, 7}}, {{}}}));
}

TEST_F(CrossWorkerInput, VariablesStartFromTheChiefsValue) {
  make_workers(1);
  auto create = [&](int w) {
    auto scope = workers_[size_t(w)]->scope();
    // Each worker proposes its own start; the chief's wins everywhere.
    auto v = workers_[size_t(w)]->create_variable(
        "v", Tensor::from_vector<float>({2}, {float(w + 1), float(w + 2)}));
    return v.value().to_vector<float>();
  };
  auto first = std::async(std::launch::async, create, 0);
  auto second = create(1);
  EXPECT_EQ(first.get(), (std::vector<float>{1, 2}));
  EXPECT_EQ(second, (std::vector<float>{1, 2}));
}

TEST_F(CrossWorkerInput, ReduceSumsEveryWorkersReplicasAndMeanDividesByAllOfThem) {
  make_workers(2);
  auto reduce = [&](int w, ReduceOp op) {
    auto& s = *workers_[size_t(w)];
    PerReplica v({Tensor::from_scalar<float>(float(10 * w + 1)),
                  Tensor::from_scalar<float>(float(10 * w + 2))},
                 s.extended().worker_devices());
    return s.reduce(op, v).scalar<float>();
  };
  for (auto op : {ReduceOp::sum, ReduceOp::mean}) {
    auto first = std::async(std::launch::async, reduce, 0, op);
    float second = reduce(1, op);
    const float expected = op == ReduceOp::sum ? 1 + 2 + 11 + 12 : (1 + 2 + 11 + 12) / 4.0f;
    EXPECT_EQ(first.get(), expected);
    EXPECT_EQ(second, expected);
  }
}

TEST_F(CrossWorkerInput, BroadcastAndAllGatherInAReplicaFunctionAreRefusedByName) {
  make_workers(1);
  auto try_broadcast = [&](int w) {
    return error_of([&] {
      workers_[size_t(w)]->run([](ReplicaContext& ctx, const std::vector<Tensor>&) {
        return std::vector<Tensor>{ctx.broadcast(Tensor::from_scalar<float>(1), 0)};
      });
    });
  };
  auto first = std::async(std::launch::async, try_broadcast, 0);
  auto second = try_broadcast(1);
  EXPECT_NE(second.find("ReplicaContext::broadcast across 2 workers is not supported"),
            std::string::npos)
      << second;
  first.get();
}

}  // namespace
}  // namespace troupe::testing
