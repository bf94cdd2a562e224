// The ring's in-process transport: replicas meet in shared memory
// (AllReduceOptions::shared_memory). A replica that throws, or finishes its step without joining,
// ends the others' wait with an error that names it, long before the merge timeout; the actor-peer
// path gives the same sums.

#include <gtest/gtest.h>

#include <cmath>

#include "fixture.hpp"

namespace troupe {
namespace {

using testing::expect_error;
using testing::value_of;
using testing::vec;

class SharedMemoryCollective : public testing::StrategyTest {};

TEST_F(SharedMemoryCollective, AThrowingReplicaEndsTheOthersWaitWithItsError) {
  MirroredStrategy s(
      runtime.system(), cpus(3),
      with_timeouts(std::chrono::seconds(60), CrossDeviceOpKind::collective_all_reduce));
  expect_error(
      [&] {
        s.run([&](ReplicaContext& c, const std::vector<Tensor>&) {
          if (c.replica_id_in_sync_group() == 2) throw invalid_argument("replica two broke");
          return std::vector<Tensor>{c.all_reduce(ReduceOp::sum, vec({1, 2}))};
        });
      },
      {"replica two broke"});
  // The group is usable again afterwards.
  auto ok = s.run_one([](ReplicaContext& c, const std::vector<Tensor>&) {
    return c.all_reduce(ReduceOp::sum, vec({1, 2}));
  });
  EXPECT_EQ(ok.at(2).data<float>()[1], 6.0f);
}

TEST_F(SharedMemoryCollective, AReplicaThatFinishesWithoutJoiningIsNamed) {
  MirroredStrategy s(
      runtime.system(), cpus(2),
      with_timeouts(std::chrono::seconds(60), CrossDeviceOpKind::collective_all_reduce));
  expect_error(
      [&] {
        s.run([&](ReplicaContext& c, const std::vector<Tensor>&) {
          Tensor t = c.all_reduce(ReduceOp::sum, vec({1}));
          if (c.replica_id_in_sync_group() == 1) t = c.all_reduce(ReduceOp::sum, t);
          return std::vector<Tensor>{t};
        });
      },
      {"replica 0 already finished step", "will not join"});
}

TEST_F(SharedMemoryCollective, ActorPeersAndSharedMemoryGiveTheSameSumAndMean) {
  for (bool shared_memory : {true, false}) {
    MirroredOptions o =
        with_timeouts(std::chrono::seconds(60), CrossDeviceOpKind::collective_all_reduce);
    o.all_reduce.shared_memory = shared_memory;
    o.all_reduce.peer_threshold_bytes = 0;  // every size through the peers when not shared
    o.all_reduce.chunk_bytes = 64;
    MirroredStrategy s(runtime.system(), cpus(3), o);
    auto out = s.run([](ReplicaContext& c, const std::vector<Tensor>&) {
      float r = float(c.replica_id_in_sync_group());
      Tensor mine = Tensor::filled<float>({1001}, r + 1);
      return std::vector<Tensor>{c.all_reduce(ReduceOp::sum, mine),
                                 c.all_reduce(ReduceOp::mean, mine)};
    });
    for (int r = 0; r < 3; ++r) {
      EXPECT_EQ(out[0].at(size_t(r)).data<float>()[1000], 6.0f) << shared_memory;
      EXPECT_FLOAT_EQ(out[1].at(size_t(r)).data<float>()[0], 2.0f) << shared_memory;
    }
  }
}

// A list of mixed dtypes meets in shared memory once per dtype, each value back in its shape.
TEST_F(SharedMemoryCollective, AListOfMixedDtypesComesBackInItsShapesAndOrder) {
  MirroredStrategy s(
      runtime.system(), cpus(3),
      with_timeouts(std::chrono::seconds(60), CrossDeviceOpKind::collective_all_reduce));
  auto out = s.run([](ReplicaContext& c, const std::vector<Tensor>&) {
    int r = c.replica_id_in_sync_group();
    return c.all_reduce(ReduceOp::sum,
                        {Tensor::filled<float>({2, 3}, float(r + 1)),
                         Tensor::filled<int64_t>({4}, int64_t(10 * (r + 1))),
                         Tensor::filled<float>({5}, 0.5f), Tensor::filled<int64_t>({1}, 1)});
  });
  ASSERT_EQ(out.size(), 4u);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(out[0].at(size_t(r)).shape(), (Shape{2, 3}));
    EXPECT_EQ(out[0].at(size_t(r)).data<float>()[5], 6.0f);
    EXPECT_EQ(out[1].at(size_t(r)).dtype(), DType::int64);
    EXPECT_EQ(out[1].at(size_t(r)).data<int64_t>()[3], 60);
    EXPECT_EQ(out[2].at(size_t(r)).data<float>()[4], 1.5f);
    EXPECT_EQ(out[3].at(size_t(r)).data<int64_t>()[0], 3);
  }
}

// Replicas that meet in shared memory get a result that knows whether all its values are finite
// (the optimizer's train.on_nan check then scans nothing); through the actor peers it knows
// nothing. A list of one dtype is one buffer: a NaN in any of its tensors marks every view.
TEST_F(SharedMemoryCollective, TheResultKnowsWhetherItIsAllFiniteOnlyFromSharedMemory) {
  for (bool shared_memory : {true, false}) {
    for (bool with_nan : {false, true}) {
      MirroredOptions o =
          with_timeouts(std::chrono::seconds(60), CrossDeviceOpKind::collective_all_reduce);
      o.all_reduce.shared_memory = shared_memory;
      o.all_reduce.peer_threshold_bytes = 0;
      MirroredStrategy s(runtime.system(), cpus(2), o);
      auto out = s.run([&](ReplicaContext& c, const std::vector<Tensor>&) {
        Tensor a = Tensor::filled<float>({300}, 1.0f);
        Tensor b = Tensor::filled<float>({40000}, 2.0f);
        if (with_nan && c.replica_id_in_sync_group() == 1) b.data<float>()[39999] = NAN;
        auto sums = c.all_reduce(ReduceOp::sum, std::vector<Tensor>{a, b});
        std::vector<Tensor> facts;
        for (auto& t : sums)
          facts.push_back(Tensor::from_scalar<int64_t>(int64_t(t.buffer()->finiteness())));
        return facts;
      });
      const Finiteness want = !shared_memory ? Finiteness::unknown
                              : with_nan     ? Finiteness::not_all_finite
                                             : Finiteness::all_finite;
      for (size_t k = 0; k < 2; ++k)
        for (int r = 0; r < 2; ++r)
          EXPECT_EQ(out[k].at(size_t(r)).scalar<int64_t>(), int64_t(want))
              << "shared_memory " << shared_memory << " nan " << with_nan << " tensor " << k
              << " replica " << r;
    }
  }
}

}  // namespace
}  // namespace troupe
