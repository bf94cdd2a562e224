// Input positions of per-worker datasets (what a parameter_server checkpoint records per
// worker, and what a resumed run starts from): each step host reports with every answer how many
// batches its datasets drew; the coordinator keeps the latest count per worker and tells the
// hosts of a resumed run where their datasets start, before any step draws.
#include <gtest/gtest.h>

#include <algorithm>

#include "coordinator/ps/cluster_coordinator.hpp"
#include "coordinator/ps/step_host.hpp"
#include "in_process_cluster.hpp"
#include "tests/common/error_of.hpp"

using namespace troupe;
using namespace troupe::testing;

namespace {

class StepHostInputPosition : public InProcessCluster {};

Tensor int64s(std::vector<int64_t> values) {
  const int64_t n = int64_t(values.size());
  return Tensor::from_vector<int64_t>({n}, values);
}

// Worker w's dataset counts up from 100 * w and ends after `length` elements.
PerWorkerDatasetFn counting_dataset(int64_t length) {
  return [length](int worker) {
    auto next = std::make_shared<int64_t>(0);
    return ElementFn([next, worker, length] {
      if (*next >= length) throw out_of_range("the counting dataset ended");
      return std::vector<Tensor>{int64s({100 * worker + (*next)++})};
    });
  };
}

// Step "draw" answers the element it drew.
RemoteStepFn draw_step() {
  return [](StepContext& ctx, const std::vector<Tensor>& args) {
    return ctx.next(args.at(0).to_vector<int64_t>()[0]);
  };
}

std::shared_ptr<StepHost> drawing_host(int w, int64_t length = 1000) {
  auto host = std::make_shared<StepHost>(w);
  host->create_per_worker_dataset(counting_dataset(length));
  host->register_step("draw", draw_step());
  return host;
}

void register_remote(ClusterCoordinator& c) {
  c.register_step("draw", [](StepContext&, const std::vector<Tensor>&) -> std::vector<Tensor> {
    throw internal_error("step 'draw' ran in the coordinator");
  });
}

int64_t element(const RemoteValue& v) { return v.fetch().at(0).to_vector<int64_t>()[0]; }

TEST_F(StepHostInputPosition, AnswersCarryTheBatchesEachHostDrewAndTheCoordinatorKeepsThem) {
  start(0);
  auto h0 = spawn_step_host(*sys_, drawing_host(0));
  auto h1 = spawn_step_host(*sys_, drawing_host(1));
  {
    ClusterCoordinator c(*sys_, {h0, h1});
    register_remote(c);
    // The coordinator's own dataset 0 stands for the hosts' dataset 0 (created in the same order).
    const PerWorkerDataset data = c.create_per_worker_dataset(counting_dataset(1000));
    EXPECT_EQ(c.batches_drawn(data), (std::vector<int64_t>{0, 0}));
    std::vector<RemoteValue> values;
    for (int k = 0; k < 9; ++k) values.push_back(c.schedule("draw", {int64s({data.id()})}));
    c.join();
    int64_t by_worker[2] = {0, 0};
    for (auto& v : values) ++by_worker[v.worker()];
    // However the closures were spread, each count is its worker's answered steps.
    EXPECT_EQ(c.batches_drawn(data), (std::vector<int64_t>{by_worker[0], by_worker[1]}));
  }
  caf::anon_send_exit(h0, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(h1, caf::exit_reason::user_shutdown);
}

TEST_F(StepHostInputPosition, AResumedHostSkipsItsPositionAndCountsOnFromIt) {
  start(0);
  auto h0 = spawn_step_host(*sys_, drawing_host(0));
  auto h1 = spawn_step_host(*sys_, drawing_host(1));
  {
    ClusterCoordinator c(*sys_, {h0, h1});
    register_remote(c);
    const PerWorkerDataset data = c.create_per_worker_dataset(counting_dataset(1000));
    c.set_input_positions(data, {12, 7});
    EXPECT_EQ(c.batches_drawn(data), (std::vector<int64_t>{12, 7}));
    std::vector<RemoteValue> values;
    for (int k = 0; k < 6; ++k) values.push_back(c.schedule("draw", {int64s({data.id()})}));
    c.join();
    std::vector<int64_t> seen[2];
    for (auto& v : values) seen[v.worker()].push_back(element(v));
    for (int w = 0; w < 2; ++w) {
      std::sort(seen[w].begin(), seen[w].end());
      const int64_t start = w == 0 ? 12 : 7;
      for (size_t i = 0; i < seen[w].size(); ++i)
        EXPECT_EQ(seen[w][i], 100 * w + start + int64_t(i));
    }
    EXPECT_EQ(c.batches_drawn(data),
              (std::vector<int64_t>{12 + int64_t(seen[0].size()), 7 + int64_t(seen[1].size())}));
    // Once drawn from, a dataset's position cannot be set again.
    EXPECT_EQ(error_of([&] {
                c.set_input_positions(data, {1, 1});
              }),
              "ClusterCoordinator: worker 0 has drawn from per-worker dataset 0 or been given "
              "its position already; input positions are set once, before the first step");
  }
  caf::anon_send_exit(h0, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(h1, caf::exit_reason::user_shutdown);
}

TEST_F(StepHostInputPosition, InProcessWorkersSkipTheirPositionsToo) {
  start(0);
  ClusterCoordinator c(*sys_, {1, 2, 1});
  c.register_step("draw", draw_step());
  const PerWorkerDataset data = c.create_per_worker_dataset(counting_dataset(1000));
  c.set_input_positions(data, {5});
  RemoteValue a = c.schedule("draw", {int64s({data.id()})});
  RemoteValue b = c.schedule("draw", {int64s({data.id()})});
  c.join();
  EXPECT_EQ(element(a), 5);
  EXPECT_EQ(element(b), 6);
  EXPECT_EQ(c.batches_drawn(data), (std::vector<int64_t>{7}));
}

TEST_F(StepHostInputPosition, BadPositionsAreRefusedNamingTheWorkerOrTheDataset) {
  start(0);
  auto h0 = spawn_step_host(*sys_, drawing_host(0, 3));
  {
    ClusterCoordinator c(*sys_, {h0});
    register_remote(c);
    const PerWorkerDataset data = c.create_per_worker_dataset(counting_dataset(3));
    EXPECT_EQ(error_of([&] {
                c.set_input_positions(data, {1, 2});
              }),
              "ClusterCoordinator: 2 input position(s) for 1 worker(s)");
    EXPECT_EQ(error_of([&] { c.set_input_positions(data, {-1}); }),
              "ClusterCoordinator: worker 0's input position -1 is negative");
    // A position past the end of the data fails the first step, naming worker and dataset.
    c.set_input_positions(data, {5});
    RemoteValue v = c.schedule("draw", {int64s({data.id()})});
    EXPECT_EQ(error_of([&] { v.fetch(); }),
              "worker 0 failed step 'draw' (step id 1): per-worker dataset 0 of worker 0 ended "
              "after 3 of the 5 batches its resumed run skips");
  }
  caf::anon_send_exit(h0, caf::exit_reason::user_shutdown);
  // A dataset the host never created.
  StepHost host(3);
  EXPECT_EQ(error_of([&] { host.set_input_position(0, 1); }),
            "per-worker dataset 0 was not created on worker 3");
  // A host whose dataset was drawn from refuses a position.
  auto drawn = drawing_host(2);
  drawn->next(2, 0);
  EXPECT_EQ(error_of([&] { drawn->set_input_position(0, 4); }),
            "worker 2: per-worker dataset 0 has been drawn from already; its input position is "
            "set before the first step");
  EXPECT_EQ(drawn->batches_drawn(), (std::vector<int64_t>{1}));
}

}  // namespace
