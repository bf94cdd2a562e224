// Trainer on MultiWorkerMirroredStrategy: two workers (one replica each, their own strategies and
// collective peers in this process, connected as between processes) train on their halves of
// every global batch and end with the weights and losses of one MirroredStrategy with two
// replicas on the whole batches (spec mirrored.md §2.5: the global batch is every worker's rows).
#include <future>

#include <caf/all.hpp>

#include "actors/collective_peer.hpp"
#include "coordinator/mirrored_strategy.hpp"
#include "coordinator/multi_worker_mirrored_strategy.hpp"
#include "core/data/synthetic.hpp"
#include "messages/collective_messages.hpp"
#include "tests/coordinator/fixture.hpp"
#include "train/optimizer.hpp"
#include "train/registry.hpp"

using namespace troupe;
using namespace troupe::testing;

namespace {

class MultiWorkerTraining : public StrategyTest {};

struct Result {
  std::vector<Tensor> parameters;
  std::vector<double> losses;
};

ModelConfig linear_config() {
  ModelConfig c;
  c.input_dim = 6;
  c.units = 1;
  c.seed = 3;
  return c;
}

std::vector<std::pair<Tensor, Tensor>> batches() {
  data::RegressionOptions o;
  o.num_examples = 64;
  o.num_features = 6;
  o.seed = 9;
  std::vector<std::pair<Tensor, Tensor>> out;
  auto it = data::synthetic_regression(o).batch(16, true).make_iterator();
  while (auto e = it.next()) out.push_back({e->at(0), e->at(1)});
  return out;
}

Result train(Strategy& s, const std::vector<std::pair<Tensor, Tensor>>& data, int worker,
             int workers) {
  auto scope = s.scope();
  Trainer trainer(s, make_linear_regression(linear_config()),
                  OptimizerConfig{OptimizerKind::sgd, 0.05});
  Result r;
  for (auto& [x, y] : data) {
    // This worker's rows of the global batch (one replica per worker).
    const int64_t rows = x.shape()[0] / workers;
    auto mine = [&](const Tensor& t) { return t.slice_rows(worker * rows, (worker + 1) * rows); };
    r.losses.push_back(
        trainer.train_steps({trainer.split_batch(mine(x))}, {trainer.split_batch(mine(y))}).at(0));
  }
  for (auto& p : trainer.parameters()) r.parameters.push_back(p.clone());
  return r;
}

/// Two MultiWorkerMirroredStrategy workers of one replica each, connected through their
/// collective peers as between processes.
struct TwoWorkers {
  std::vector<caf::actor> peers;
  std::vector<std::unique_ptr<MultiWorkerMirroredStrategy>> workers;
  explicit TwoWorkers(caf::actor_system& system) {
    peers = {spawn_collective_peer(system), spawn_collective_peer(system)};
    for (int r = 0; r < 2; ++r) caf::anon_send(peers[size_t(r)], collective_peers_msg{r, peers});
    for (int w = 0; w < 2; ++w)
      workers.push_back(std::make_unique<MultiWorkerMirroredStrategy>(
          system,
          peer_worker_collective(system, peers[size_t(w)], w,
                                 {"/job:worker/task:0", "/job:worker/task:1"}, {}),
          std::vector<std::string>{"CPU:0"}));
  }
  ~TwoWorkers() {
    for (auto& p : peers) caf::anon_send_exit(p, caf::exit_reason::user_shutdown);
  }
};

TEST_F(MultiWorkerTraining, TwoWorkersOfOneReplicaTrainLikeTwoReplicasInOneProcess) {
  const auto data = batches();
  MirroredStrategy one(runtime.system(), {"CPU:0", "CPU:1"});
  Result expected = train(one, data, 0, 1);

  TwoWorkers group(runtime.system());
  auto first = std::async(std::launch::async, [&] { return train(*group.workers[0], data, 0, 2); });
  Result second = train(*group.workers[1], data, 1, 2);
  Result chief = first.get();

  ASSERT_EQ(chief.losses.size(), expected.losses.size());
  for (size_t k = 0; k < expected.losses.size(); ++k) {
    EXPECT_NEAR(chief.losses[k], expected.losses[k], 1e-6) << "step " << k;
    EXPECT_EQ(chief.losses[k], second.losses[k]) << "step " << k;
  }
  for (size_t k = 0; k < expected.parameters.size(); ++k) {
    auto a = chief.parameters[k].to_vector<float>(), b = expected.parameters[k].to_vector<float>();
    auto c = second.parameters[k].to_vector<float>();
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_NEAR(a[i], b[i], 1e-6) << "parameter " << k << "[" << i << "]";
      EXPECT_EQ(a[i], c[i]) << "parameter " << k << "[" << i << "]";
    }
  }
}

// A NaN in one worker's rows stops both workers at that step (train.on_nan: stop), on either
// apply path. Their sums come from the collective between workers, not the in-process shared
// memory all-reduce, so no finiteness fact comes with them: all_finite must scan them.
class MultiWorkerNonFinite : public StrategyTest,
                             public ::testing::WithParamInterface<ApplyPath> {};

/// Trains `worker`'s rows until a step throws; returns the error ("" when every step ran) and
/// the number of steps that completed.
std::pair<std::string, size_t> train_until_error(Strategy& s,
                                                 const std::vector<std::pair<Tensor, Tensor>>& data,
                                                 int worker, ApplyPath path) {
  auto scope = s.scope();
  Trainer trainer(s, make_linear_regression(linear_config()),
                  OptimizerConfig{OptimizerKind::sgd, 0.05}, path);
  size_t done = 0;
  for (auto& [x, y] : data) {
    const int64_t rows = x.shape()[0] / 2;
    auto mine = [&](const Tensor& t) { return t.slice_rows(worker * rows, (worker + 1) * rows); };
    try {
      trainer.train_steps({trainer.split_batch(mine(x))}, {trainer.split_batch(mine(y))});
    } catch (const Error& e) {
      return {e.what(), done};
    }
    ++done;
  }
  return {"", done};
}

TEST_P(MultiWorkerNonFinite, ANanInOneWorkersRowsStopsBothAtThatStep) {
  auto data = batches();
  Tensor x = data[1].first.clone();  // step 2's batch: row 12 is in worker 1's half (8-15)
  x.data<float>()[12 * x.shape()[1] + 2] = std::numeric_limits<float>::quiet_NaN();
  data[1].first = x;
  TwoWorkers group(runtime.system());
  auto first = std::async(std::launch::async, [&] {
    return train_until_error(*group.workers[0], data, 0, GetParam());
  });
  auto [second_error, second_done] = train_until_error(*group.workers[1], data, 1, GetParam());
  auto [first_error, first_done] = first.get();
  EXPECT_EQ(first_done, 1u);
  EXPECT_EQ(second_done, 1u);
  EXPECT_NE(second_error.find("non-finite loss or gradients at training step 2"), std::string::npos)
      << second_error;
  // The other worker's own values were finite: it stops on the sum (all_reduce path) or on the
  // flag the merge function sums (merge_call path), at the same step.
  EXPECT_NE(first_error.find("non-finite"), std::string::npos) << first_error;
  EXPECT_NE(first_error.find("training step 2"), std::string::npos) << first_error;
}

INSTANTIATE_TEST_SUITE_P(Paths, MultiWorkerNonFinite,
                         ::testing::Values(ApplyPath::all_reduce, ApplyPath::merge_call),
                         [](const ::testing::TestParamInfo<ApplyPath>& info) {
                           return info.param == ApplyPath::all_reduce ? "all_reduce" : "merge_call";
                         });

}  // namespace
