// ClusterCoordinator with worker actors in this process (spec cluster-and-ps.md §7.4–7.9;
// T-V2-3, T-V2-5, T-V2-7, T-V2-11, R-V2-FT-WORKER) and exactly-once updates at the shards.
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>

#include "coordinator/ps/cluster_coordinator.hpp"
#include "coordinator/ps/parameter_server_strategy.hpp"
#include "in_process_cluster.hpp"
#include "tests/common/error_of.hpp"

using namespace troupe;
using namespace troupe::testing;

namespace {

class ClusterCoordinatorTest : public InProcessCluster {};

Tensor scalar(float x) { return floats({1}, {x}); }
float value_of(const Tensor& t) { return t.to_vector<float>().at(0); }

// A gate a test opens once; steps wait on it (no sleeps, no timing).
class Gate {
 public:
  void open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = false;
};

TEST_F(ClusterCoordinatorTest, T_V2_3_BasicSchedule) {
  start(1);
  ParameterServerStrategy s(*sys_, ps);
  DistributedVariable v1 = [&] {
    auto scope = s.scope();
    return s.create_variable("v1", scalar(0.f));
  }();
  DistributedVariable v2 = [&] {
    auto scope = s.scope();
    return s.create_variable("v2", scalar(1.f));
  }();
  ClusterCoordinator c(*sys_, {1, 2, 1});
  c.register_step("worker_fn", [&](StepContext&, const std::vector<Tensor>&) {
    v1.storage().write(0, VariableWrite::add, {scalar(0.1f)});
    v2.storage().write(0, VariableWrite::sub, {scalar(0.2f)});
    return std::vector<Tensor>{
        scalar(value_of(v1.storage().read(0)) / value_of(v2.storage().read(0)))};
  });
  RemoteValue r = c.schedule("worker_fn");
  EXPECT_FLOAT_EQ(value_of(r.fetch().at(0)), 0.125f);
  EXPECT_TRUE(r.ready());
  EXPECT_EQ(r.worker(), 0);
  EXPECT_EQ(r.step_id(), 1u);
  EXPECT_FLOAT_EQ(value_of(v1.storage().read(0)), 0.1f);
  EXPECT_FLOAT_EQ(value_of(v2.storage().read(0)), 0.8f);
}

TEST_F(ClusterCoordinatorTest, T_V2_5_AccumulateFromPerWorkerDatasets) {
  start(2);
  ParameterServerStrategy s(*sys_, ps);
  DistributedVariable v = [&] {
    auto scope = s.scope();
    return s.create_variable("v", scalar(0.f));
  }();
  ClusterCoordinator c(*sys_, {5, 2, 1});
  // from_tensor_slices([2] * 10) on every worker.
  PerWorkerDataset data = c.create_per_worker_dataset([](int) {
    auto left = std::make_shared<int>(10);
    return ElementFn([left] {
      if ((*left)-- <= 0) throw out_of_range("end of sequence");
      return std::vector<Tensor>{scalar(2.f)};
    });
  });
  c.register_step("worker_fn", [&](StepContext& ctx, const std::vector<Tensor>&) {
    v.storage().write(0, VariableWrite::add, {ctx.next(data).at(0)});
    return std::vector<Tensor>{};
  });
  c.join();
  EXPECT_FLOAT_EQ(value_of(v.storage().read(0)), 0.f);
  for (int i = 0; i < 5; ++i) c.schedule("worker_fn");
  c.join();
  EXPECT_FLOAT_EQ(value_of(v.storage().read(0)), 10.f);
  for (int i = 0; i < 5; ++i) c.schedule("worker_fn");
  c.join();
  c.join();
  c.join();
  EXPECT_FLOAT_EQ(value_of(v.storage().read(0)), 20.f);
  EXPECT_TRUE(c.done());
}

TEST_F(ClusterCoordinatorTest, T_V2_7_EachIdleWorkerTakesOneClosureWithItsOwnShard) {
  start(1);
  ClusterCoordinator c(*sys_, {5, 2, 1});
  // range(10).shard(5, worker_index), summed by one closure per worker.
  PerWorkerDataset data = c.create_per_worker_dataset([](int worker) {
    return ElementFn(
        [worker] { return std::vector<Tensor>{scalar(float(worker) + float(worker + 5))}; });
  });
  // Every worker waits until all five closures have started, so each worker holds one.
  std::mutex m;
  std::condition_variable cv;
  int started = 0;
  c.register_step("sum_shard", [&](StepContext& ctx, const std::vector<Tensor>&) {
    std::unique_lock<std::mutex> lock(m);
    ++started;
    cv.notify_all();
    cv.wait(lock, [&] { return started == 5; });
    return ctx.next(data);
  });
  std::vector<RemoteValue> values;
  for (int i = 0; i < 5; ++i) values.push_back(c.schedule("sum_shard"));
  std::vector<float> sums;
  for (auto& out : ClusterCoordinator::fetch(values)) sums.push_back(value_of(out.at(0)));
  std::sort(sums.begin(), sums.end());
  EXPECT_EQ(sums, (std::vector<float>{5, 7, 9, 11, 13}));
}

TEST_F(ClusterCoordinatorTest, T_V2_11_AFailingStepIsRaisedOnceAndQueuedOnesAreCancelled) {
  start(1);
  ClusterCoordinator c(*sys_, {1, 1, 1});
  Gate gate;
  c.register_step("ok", [](StepContext&, const std::vector<Tensor>&) {
    return std::vector<Tensor>{scalar(1.f)};
  });
  c.register_step("fail", [&](StepContext&, const std::vector<Tensor>&) -> std::vector<Tensor> {
    gate.wait();  // hold the only worker so the next closure is still queued
    throw invalid_argument("assertion failed: x > 0");
  });
  RemoteValue failing = c.schedule("fail");
  RemoteValue queued = c.schedule("ok");
  gate.open();
  EXPECT_EQ(error_of([&] { c.join(); }), "assertion failed: x > 0");
  EXPECT_EQ(error_of([&] { failing.fetch(); }), "assertion failed: x > 0");
  // The queued closure was cancelled, unless the worker had already taken it.
  std::string queued_error = error_of([&] { queued.fetch(); });
  EXPECT_TRUE(queued_error.empty() ||
              queued_error == "step 'ok' (step id 2) was cancelled: an earlier step failed")
      << queued_error;
  // Raised once; the coordinator is usable afterwards (R-V2-ERR-4).
  RemoteValue again = c.schedule("ok");
  c.join();
  EXPECT_FLOAT_EQ(value_of(again.fetch().at(0)), 1.f);
  EXPECT_TRUE(c.done());
}

TEST_F(ClusterCoordinatorTest, ErrorsNameTheStepAndTheField) {
  start(1);
  EXPECT_EQ(error_of([&] {
              ClusterCoordinator c(*sys_, {0, 1, 1});
            }),
            "ClusterCoordinator: num_workers must be at least 1, got 0");
  EXPECT_EQ(error_of([&] {
              ClusterCoordinator c(*sys_, {1, 0, 1});
            }),
            "ClusterCoordinator: max_in_flight_per_worker must be at least 1, got 0");
  ClusterCoordinator c(*sys_, {1, 1, 1});
  EXPECT_EQ(error_of([&] { c.schedule("train"); }),
            "ClusterCoordinator: no step named 'train' (registered: none)");
  auto noop = [](StepContext&, const std::vector<Tensor>&) { return std::vector<Tensor>{}; };
  c.register_step("eval", noop);
  EXPECT_EQ(error_of([&] { c.register_step("eval", noop); }),
            "ClusterCoordinator: step 'eval' is already registered");
  EXPECT_EQ(error_of([&] { c.schedule("train"); }),
            "ClusterCoordinator: no step named 'train' (registered: eval)");
  EXPECT_EQ(error_of([&] { c.worker(3); }), "worker 3 is not in [0, 1)");
}

// R-V2-FT-WORKER with troupe's exactly-once: worker 1's actor is killed while it runs a step;
// the closure sent to it after the kill comes back and runs on worker 0 with the same step id;
// the shard counts every scheduled step exactly once.
TEST_F(ClusterCoordinatorTest, AKilledWorkersClosuresRunOnALiveWorkerExactlyOnce) {
  start(1);
  ParameterServerStrategy s(*sys_, ps);
  DistributedVariable counter = [&] {
    auto scope = s.scope();
    return s.create_variable("counter", scalar(0.f));
  }();
  ClusterCoordinator c(*sys_, {2, 2, 100});
  Gate gates[2];
  std::mutex m;
  std::condition_variable cv;
  bool first[2] = {true, true};
  int blocked = 0;
  c.register_step("count", [&](StepContext& ctx, const std::vector<Tensor>&) {
    // Carries ctx.step_id(): a second delivery of the same step would be acknowledged, not
    // applied.
    counter.storage().write(0, VariableWrite::add, {scalar(1.f)});
    bool wait = false;
    {
      std::lock_guard<std::mutex> lock(m);
      wait = first[ctx.worker()];
      first[ctx.worker()] = false;
      if (wait) ++blocked;
      cv.notify_all();
    }
    if (wait) gates[ctx.worker()].wait();
    return std::vector<Tensor>{Tensor::from_scalar<int64_t>(int64_t(ctx.step_id()))};
  });
  std::vector<RemoteValue> values;
  values.push_back(c.schedule("count"));  // -> worker 0 (both idle: the lower index)
  values.push_back(c.schedule("count"));  // -> worker 1
  {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return blocked == 2; });
  }
  caf::anon_send_exit(c.worker(1), caf::exit_reason::kill);
  // Dispatched before worker 1 handles the kill: one to worker 0, one behind the kill at
  // worker 1; the rest wait in the queue.
  for (int i = 0; i < 6; ++i) values.push_back(c.schedule("count"));
  gates[1].open();
  gates[0].open();
  c.join();
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(values[i].fetch().at(0).scalar<int64_t>(), int64_t(100 + i));
    EXPECT_EQ(values[i].step_id(), 100 + i);
  }
  EXPECT_EQ(values[1].worker(), 1);  // finished before the kill was handled
  for (size_t i = 2; i < values.size(); ++i) EXPECT_EQ(values[i].worker(), 0) << i;
  EXPECT_GE(c.rescheduled(), 1);
  EXPECT_EQ(c.live_workers(), 1);
  EXPECT_FLOAT_EQ(value_of(counter.storage().read(0)), float(values.size()));
}

TEST_F(ClusterCoordinatorTest, WithEveryWorkerGoneJoinSaysSo) {
  start(1);
  ClusterCoordinator c(*sys_, {1, 1, 1});
  Gate started, gate;
  c.register_step("wait", [&](StepContext&, const std::vector<Tensor>&) {
    started.open();
    gate.wait();
    return std::vector<Tensor>{};
  });
  RemoteValue running = c.schedule("wait");
  started.wait();  // the worker runs it: the kill lands behind it
  caf::anon_send_exit(c.worker(0), caf::exit_reason::kill);
  RemoteValue stranded = c.schedule("wait");
  gate.open();
  EXPECT_EQ(error_of([&] { c.join(); }),
            "every worker of the cluster coordinator is gone; 1 scheduled step(s) cannot run");
  EXPECT_TRUE(running.fetch().empty());
  EXPECT_EQ(error_of([&] { stranded.fetch(); }),
            "every worker of the cluster coordinator is gone; 1 scheduled step(s) cannot run");
}

}  // namespace
