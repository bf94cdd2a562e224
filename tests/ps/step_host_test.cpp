// ClusterCoordinator over step hosts (coordinator/ps/step_host.hpp): the workers of a
// parameter_server run across processes, here in one actor system. Closures travel by step name
// with their step id and attempt; each host draws from its own per-worker dataset; a step's
// error names the worker and the step; a host that goes away has its closures rescheduled.
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <future>
#include <mutex>

#include "coordinator/ps/cluster_coordinator.hpp"
#include "coordinator/ps/step_host.hpp"
#include "in_process_cluster.hpp"
#include "messages/ps_step_messages.hpp"
#include "tests/common/error_of.hpp"

using namespace troupe;
using namespace troupe::testing;

namespace {

class StepHostCoordinator : public InProcessCluster {};

Tensor int64s(std::vector<int64_t> values) {
  const int64_t n = int64_t(values.size());
  return Tensor::from_vector<int64_t>({n}, values);
}

// A step host of worker `w` whose step "draw" answers {worker, next element, step id, attempt}
// from a dataset counting up from 100 * w.
// With `gate`, each step first waits for it: the host stays busy, so the coordinator sends the
// next closure to another worker (dispatch prefers the idle one).
std::shared_ptr<StepHost> drawing_host(int w, std::shared_future<void> gate = {}) {
  auto host = std::make_shared<StepHost>(w);
  host->create_per_worker_dataset([](int worker) {
    auto next = std::make_shared<int64_t>(100 * worker);
    return ElementFn([next] { return std::vector<Tensor>{int64s({(*next)++})}; });
  });
  host->register_step("draw", [gate](StepContext& ctx, const std::vector<Tensor>& args) {
    if (gate.valid()) gate.wait();
    const int64_t element = ctx.next(args.at(0).to_vector<int64_t>()[0])[0].to_vector<int64_t>()[0];
    return std::vector<Tensor>{
        int64s({ctx.worker(), element, int64_t(ctx.step_id()), int64_t(ctx.attempt())})};
  });
  return host;
}

// The coordinator knows the step by name; the hosts run it.
void register_remote(ClusterCoordinator& c, const std::string& name) {
  c.register_step(name, [name](StepContext&, const std::vector<Tensor>&) -> std::vector<Tensor> {
    throw internal_error("step '" + name + "' ran in the coordinator");
  });
}

TEST_F(StepHostCoordinator, ClosuresRunByNameOnEachHostsOwnDataset) {
  start(0);
  auto h0 = spawn_step_host(*sys_, drawing_host(0));
  auto h1 = spawn_step_host(*sys_, drawing_host(1));
  {
    ClusterCoordinator c(*sys_, {h0, h1});
    EXPECT_EQ(c.num_workers(), 2);
    register_remote(c, "draw");
    std::vector<RemoteValue> values;
    for (int k = 0; k < 10; ++k) values.push_back(c.schedule("draw", {int64s({0})}));
    c.join();
    std::vector<int64_t> seen[2];
    for (size_t k = 0; k < values.size(); ++k) {
      auto out = values[k].fetch().at(0).to_vector<int64_t>();
      ASSERT_EQ(out.size(), 4u);
      EXPECT_EQ(out[0], values[k].worker());
      EXPECT_EQ(out[2], int64_t(k) + 1);  // step ids count up from 1
      EXPECT_EQ(out[3], 1);               // first attempt
      seen[out[0]].push_back(out[1]);
    }
    // Each worker drew its own iterator in order: 100*w, 100*w + 1, ... (a fast host may have
    // run every closure: dispatch prefers an idle worker, ties to the lower index).
    EXPECT_EQ(seen[0].size() + seen[1].size(), values.size());
    for (int w = 0; w < 2; ++w) {
      std::sort(seen[w].begin(), seen[w].end());
      for (size_t i = 0; i < seen[w].size(); ++i) EXPECT_EQ(seen[w][i], 100 * w + int64_t(i));
    }
  }
  caf::anon_send_exit(h0, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(h1, caf::exit_reason::user_shutdown);
}

TEST_F(StepHostCoordinator, AStepErrorOnAHostNamesTheWorkerAndTheStep) {
  start(0);
  auto host = std::make_shared<StepHost>(0);
  host->register_step("boom", [](StepContext&, const std::vector<Tensor>&) -> std::vector<Tensor> {
    throw invalid_argument("the batch has 3 columns, the model wants 2");
  });
  auto h0 = spawn_step_host(*sys_, host);
  {
    ClusterCoordinator c(*sys_, {h0});
    register_remote(c, "boom");
    RemoteValue v = c.schedule("boom");
    EXPECT_EQ(error_of([&] { v.fetch(); }),
              "worker 0 failed step 'boom' (step id 1): the batch has 3 columns, the model "
              "wants 2");
    EXPECT_EQ(error_of([&] { c.join(); }),
              "worker 0 failed step 'boom' (step id 1): the batch has 3 columns, the model "
              "wants 2");
    // A step the host does not know is its error too, naming the worker.
    register_remote(c, "unknown");
    RemoteValue u = c.schedule("unknown");
    EXPECT_EQ(error_of([&] { u.fetch(); }),
              "worker 0 failed step 'unknown' (step id 2): worker 0 has no step named 'unknown'");
  }
  caf::anon_send_exit(h0, caf::exit_reason::user_shutdown);
}

TEST_F(StepHostCoordinator, RemoteWorkersMustBeValidHandles) {
  start(0);
  EXPECT_EQ(error_of([&] { ClusterCoordinator c(*sys_, std::vector<caf::actor>{}); }),
            "ClusterCoordinator: no remote worker was given");
  auto h0 = spawn_step_host(*sys_, drawing_host(0));
  EXPECT_EQ(error_of([&] {
              ClusterCoordinator c(*sys_, {h0, caf::actor{}});
            }),
            "ClusterCoordinator: remote worker 1 is not a valid actor handle");
  caf::anon_send_exit(h0, caf::exit_reason::user_shutdown);
}

TEST(StepHost, BadArgumentsAreRefusedByName) {
  EXPECT_EQ(error_of([] { StepHost h(-1); }), "StepHost: the worker index must be >= 0, got -1");
  StepHost h(2);
  h.register_step("s",
                  [](StepContext&, const std::vector<Tensor>&) { return std::vector<Tensor>{}; });
  EXPECT_EQ(error_of([&] {
              h.register_step("s", [](StepContext&, const std::vector<Tensor>&) {
                return std::vector<Tensor>{};
              });
            }),
            "StepHost: step 's' is already registered");
  EXPECT_EQ(error_of([&] { h.next(2, 0); }), "per-worker dataset 0 was not created on worker 2");
}

// Holds the closures a "lost" worker received without answering (as a connection that dropped
// would), and tells the test when the first arrived.
struct Swallowed {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<caf::response_promise> promises;
  std::vector<uint64_t> step_ids;
};

caf::behavior swallowing_worker(caf::event_based_actor* self, std::shared_ptr<Swallowed> s) {
  return {[self, s](ps_run_step_msg& msg) -> caf::result<ps_step_done_msg> {
    std::lock_guard<std::mutex> lock(s->mutex);
    s->promises.push_back(self->make_response_promise());
    s->step_ids.push_back(msg.step_id);
    s->changed.notify_all();
    return caf::delegated<ps_step_done_msg>();
  }};
}

TEST_F(StepHostCoordinator, AHostThatGoesAwayHasItsClosuresRescheduledWithTheirStepIds) {
  start(0);
  auto swallowed = std::make_shared<Swallowed>();
  // Host 0 holds its first closure until the lost worker has one, so that the lost one gets
  // closures however fast host 0 is.
  std::promise<void> open_gate;
  auto h0 = spawn_step_host(*sys_, drawing_host(0, open_gate.get_future().share()));
  auto lost = sys_->spawn(swallowing_worker, swallowed);
  {
    ClusterCoordinator c(*sys_, {h0, lost});
    register_remote(c, "draw");
    std::vector<RemoteValue> values;
    for (int k = 0; k < 6; ++k) values.push_back(c.schedule("draw", {int64s({0})}));
    std::vector<uint64_t> held;
    {
      std::unique_lock<std::mutex> lock(swallowed->mutex);
      swallowed->changed.wait(lock, [&] { return !swallowed->step_ids.empty(); });
    }
    open_gate.set_value();
    // Worker 1 goes away holding closures (its down message reaches the coordinator).
    caf::anon_send_exit(lost, caf::exit_reason::user_shutdown);
    c.join();
    {
      std::lock_guard<std::mutex> lock(swallowed->mutex);
      held = swallowed->step_ids;
    }
    EXPECT_EQ(c.live_workers(), 1);
    EXPECT_GE(c.rescheduled(), int64_t(held.size()));
    int64_t second_attempts = 0;
    for (size_t k = 0; k < values.size(); ++k) {
      auto out = values[k].fetch().at(0).to_vector<int64_t>();
      EXPECT_EQ(out[0], 0);               // run by the live worker
      EXPECT_EQ(out[2], int64_t(k) + 1);  // with its own step id
      const bool was_held = std::count(held.begin(), held.end(), uint64_t(k) + 1) > 0;
      // The second attempt when the lost worker held it. One sent to it as it went away never
      // reached its handler (so is not in `held`) and comes back as a second attempt too.
      if (was_held) {
        EXPECT_EQ(out[3], 2) << "closure " << k;
      }
      EXPECT_TRUE(out[3] == 1 || out[3] == 2) << "closure " << k << ": attempt " << out[3];
      second_attempts += out[3] == 2 ? 1 : 0;
    }
    EXPECT_EQ(second_attempts, c.rescheduled()) << "every rescheduled closure ran a second time";
  }
  caf::anon_send_exit(h0, caf::exit_reason::user_shutdown);
}

}  // namespace
