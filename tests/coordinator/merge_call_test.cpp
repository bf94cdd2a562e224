// merge_call through the replica threads and the barrier actor (spec mirrored.md §2.9, §2.14,
// §3.2).
#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "tests/coordinator/fixture.hpp"

using namespace troupe;
using namespace troupe::testing;

class MergeCall : public StrategyTest {};

TEST_F(MergeCall, TwoCallsPerReplicaRunTheMergeFunctionTwice) {
  MirroredStrategy s(runtime.system(), cpus(2));
  std::atomic<int> merges{0};
  auto out = s.run_one([&](ReplicaContext& c, const std::vector<Tensor>&) {
    float total = 0;
    for (int call = 0; call < 2; ++call) {
      auto r = c.merge_call(
          [&](Strategy& st, const std::vector<PerReplica>& args) {
            ++merges;
            EXPECT_EQ(args.at(0).size(), 2u);
            return std::vector<DistributedValues>{
                st.extended().reduce_to(ReduceOp::sum, args[0], args[0])};
          },
          {scalar(float(c.replica_id_in_sync_group() + 1))});
      total += value_of(r.at(0));
    }
    return scalar(total);
  });
  EXPECT_EQ(merges.load(), 2);
  EXPECT_EQ(value_of(out.at(0)), 6.0f);  // (1+2) twice
  EXPECT_EQ(value_of(out.at(1)), 6.0f);
}

TEST_F(MergeCall, MergeFunctionRunsInCrossReplicaContext) {
  MirroredStrategy s(runtime.system(), cpus(2));
  auto scope = s.scope();
  auto v = s.create_variable("v", scalar(0));
  s.run([&](ReplicaContext& c, const std::vector<Tensor>&) {
    c.merge_call([&](Strategy& st, const std::vector<PerReplica>&) {
      EXPECT_EQ(get_replica_context(), nullptr);
      EXPECT_EQ(current_strategy(), &st);
      v.assign(scalar(7));  // cross-replica write: every component
      return std::vector<DistributedValues>{};
    });
    return std::vector<Tensor>{};
  });
  for (auto& comp : v.components()) EXPECT_EQ(value_of(comp.read()), 7.0f);
}

TEST_F(MergeCall, UnequalNumbersOfMergeCallsEndInANamedError) {
  MirroredStrategy s(runtime.system(), cpus(2), with_timeouts(std::chrono::seconds(30)));
  auto noop = [](Strategy&, const std::vector<PerReplica>&) {
    return std::vector<DistributedValues>{};
  };
  expect_error(
      [&] {
        s.run([&](ReplicaContext& c, const std::vector<Tensor>&) {
          c.merge_call(noop, {}, "first");
          if (c.replica_id_in_sync_group() == 1) c.merge_call(noop, {}, "second");
          return std::vector<Tensor>{};
        });
      },
      {"different numbers of merge_call calls", "replica 0 finished step", "after 1 merge_call(s)",
       "merge_call 1 (tag 'second')"});
  // The group is usable again afterwards.
  auto ok = s.run_one([](ReplicaContext& c, const std::vector<Tensor>&) {
    return c.all_reduce(ReduceOp::sum, scalar(1));
  });
  EXPECT_EQ(value_of(ok.at(1)), 2.0f);
}

TEST_F(MergeCall, TagMismatchNamesReplicasStepCallAndTags) {
  MirroredStrategy s(runtime.system(), cpus(2));
  auto noop = [](Strategy&, const std::vector<PerReplica>&) {
    return std::vector<DistributedValues>{};
  };
  expect_error(
      [&] {
        s.run([&](ReplicaContext& c, const std::vector<Tensor>&) {
          c.merge_call(noop, {}, c.replica_id_in_sync_group() == 0 ? "grads" : "metrics");
          return std::vector<Tensor>{};
        });
      },
      {"merge_call mismatch at step", "(tag 'grads')", "(tag 'metrics')"});
}

TEST_F(MergeCall, ThrowingReplicaFailsTheRunAndReleasesItsPeers) {
  MirroredStrategy s(runtime.system(), cpus(3), with_timeouts(std::chrono::seconds(30)));
  expect_error(
      [&] {
        s.run([&](ReplicaContext& c, const std::vector<Tensor>&) {
          if (c.replica_id_in_sync_group() == 2) throw invalid_argument("bad batch on replica 2");
          c.all_reduce(ReduceOp::sum, scalar(1));
          return std::vector<Tensor>{};
        });
      },
      {"failed on replica 2: bad batch on replica 2", "(replica(s) [0, 1] failed too)"});
}

TEST_F(MergeCall, ReplicaThatNeverArrivesTimesOutWithItsName) {
  MirroredStrategy s(runtime.system(), cpus(2), with_timeouts(std::chrono::milliseconds(200)));
  expect_error(
      [&] {
        s.run([&](ReplicaContext& c, const std::vector<Tensor>&) {
          // Replica 1 is a slow peer: it arrives long after the barrier's timeout.
          if (c.replica_id_in_sync_group() == 1)
            std::this_thread::sleep_for(std::chrono::milliseconds(800));
          c.all_reduce(ReduceOp::sum, scalar(1));
          return std::vector<Tensor>{};
        });
      },
      {"timed out after", "replica(s) [1] did not arrive (arrived: [0])"});
}

TEST_F(MergeCall, MergeFunctionErrorReachesTheCaller) {
  MirroredStrategy s(runtime.system(), cpus(2));
  expect_error(
      [&] {
        s.run([&](ReplicaContext& c, const std::vector<Tensor>&) {
          c.merge_call(
              [](Strategy&, const std::vector<PerReplica>&) -> std::vector<DistributedValues> {
                throw invalid_argument("merge saw a NaN");
              });
          return std::vector<Tensor>{};
        });
      },
      {"merge function failed at step", "merge saw a NaN"});
}

TEST_F(MergeCall, DifferentArgumentCountsAreNamed) {
  MirroredStrategy s(runtime.system(), cpus(2));
  auto noop = [](Strategy&, const std::vector<PerReplica>&) {
    return std::vector<DistributedValues>{};
  };
  expect_error(
      [&] {
        s.run([&](ReplicaContext& c, const std::vector<Tensor>&) {
          std::vector<Tensor> args(size_t(c.replica_id_in_sync_group() + 1), scalar(1));
          c.merge_call(noop, args, "t");
          return std::vector<Tensor>{};
        });
      },
      {"replica 0 passed 1 argument(s), replica 1 passed 2"});
}

TEST_F(MergeCall, ManyStepsInARow) {
  MirroredStrategy s(runtime.system(), cpus(4));
  for (int step = 0; step < 200; ++step) {
    auto out = s.run_one([&](ReplicaContext& c, const std::vector<Tensor>&) {
      return c.all_reduce(ReduceOp::mean, scalar(float(c.replica_id_in_sync_group() + step)));
    });
    ASSERT_FLOAT_EQ(value_of(out.at(3)), 1.5f + float(step));
  }
}

// A timed-out step's replica cannot be stopped: the group refuses later steps instead of
// letting the next step race the late replica (the late report must never be taken for it).
TEST_F(MergeCall, ReplicaSlowerThanTheStepTimeoutIsNamedAndLaterStepsAreRefused) {
  MirroredOptions o = with_timeouts(std::chrono::seconds(30));
  o.timeouts.step_timeout = std::chrono::milliseconds(300);
  // Owned by the step function: the slow replica outlives this test's frame until `s` joins it.
  auto slow = std::make_shared<std::atomic<bool>>(true);
  auto released = std::make_shared<std::atomic<bool>>(false);
  MirroredStrategy s(runtime.system(), cpus(3), o);
  auto step = [slow, released](ReplicaContext& c, const std::vector<Tensor>&) {
    if (c.replica_id_in_sync_group() == 1 && slow->exchange(false))
      while (!*released) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return scalar(float(c.replica_id_in_sync_group()));
  };
  try {
    s.run_one(step);
    ADD_FAILURE() << "expected deadline_exceeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::deadline_exceeded);
    EXPECT_NE(std::string(e.what()).find("replica(s) [1] did not finish within 300 ms"),
              std::string::npos)
        << e.what();
  }
  // Replica 1 answers the abandoned step late; no later step may take that answer.
  *released = true;
  s.wait_for_replicas();
  try {
    s.run_one(step);
    ADD_FAILURE() << "expected failed_precondition";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::failed_precondition);
    EXPECT_NE(std::string(e.what()).find("MirroredStrategy.run(): the replica group cannot run "
                                         "another step: step 1: replica(s) [1] did not finish "
                                         "within 300 ms"),
              std::string::npos)
        << e.what();
  }
}

// A replica that finishes a step without any merge_call does not message the barrier unless a
// merge_call of that step has begun; both orders must still end in the named error at once.
TEST_F(MergeCall, ReplicaWithoutMergeCallsIsNamedWhetherItFinishesBeforeOrAfterTheOthersArrive) {
  MirroredStrategy s(runtime.system(), cpus(3), with_timeouts(std::chrono::seconds(30)));
  auto noop = [](Strategy&, const std::vector<PerReplica>&) {
    return std::vector<DistributedValues>{};
  };
  for (bool quiet_one_first : {true, false}) {
    SCOPED_TRACE(quiet_one_first ? "finishes first" : "finishes last");
    auto start = std::chrono::steady_clock::now();
    expect_error(
        [&] {
          s.run([&](ReplicaContext& c, const std::vector<Tensor>&) {
            const bool quiet = c.replica_id_in_sync_group() == 2;
            if (quiet != quiet_one_first)
              std::this_thread::sleep_for(std::chrono::milliseconds(50));
            if (!quiet) c.merge_call(noop, {}, "only");
            return std::vector<Tensor>{};
          });
        },
        {"different numbers of merge_call calls", "replica 2 finished step",
         "after 0 merge_call(s)"});
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10))
        << "the error came from the merge timeout, not from the finished replica";
  }
  auto ok = s.run_one([](ReplicaContext& c, const std::vector<Tensor>&) {
    return c.all_reduce(ReduceOp::sum, scalar(1));
  });
  EXPECT_EQ(value_of(ok.at(2)), 3.0f);
}

// The merge runs on the thread of the replica that completes the round (no actor message on a
// round's path), never on a CAF scheduler thread: a merge that blocks (a GPU reduction waiting
// for its device, user code) holds none.
TEST_F(MergeCall, TheMergeFunctionRunsOnAReplicaThread) {
  MirroredStrategy s(runtime.system(), cpus(3));
  std::mutex mutex;
  std::set<std::thread::id> replica_threads;
  std::vector<std::thread::id> merges;
  for (int step = 0; step < 20; ++step)
    s.run([&](ReplicaContext& c, const std::vector<Tensor>&) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        replica_threads.insert(std::this_thread::get_id());
      }
      c.merge_call([&](Strategy&, const std::vector<PerReplica>&) {
        std::lock_guard<std::mutex> lock(mutex);
        merges.push_back(std::this_thread::get_id());
        return std::vector<DistributedValues>{};
      });
      return std::vector<Tensor>{};
    });
  EXPECT_EQ(replica_threads.size(), 3u);
  ASSERT_EQ(merges.size(), 20u);  // once per round
  for (auto id : merges) EXPECT_EQ(replica_threads.count(id), 1u);
}
