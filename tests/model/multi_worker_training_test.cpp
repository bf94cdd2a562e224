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

TEST_F(MultiWorkerTraining, TwoWorkersOfOneReplicaTrainLikeTwoReplicasInOneProcess) {
  const auto data = batches();
  MirroredStrategy one(runtime.system(), {"CPU:0", "CPU:1"});
  Result expected = train(one, data, 0, 1);

  std::vector<caf::actor> peers{spawn_collective_peer(runtime.system()),
                                spawn_collective_peer(runtime.system())};
  for (int r = 0; r < 2; ++r) caf::anon_send(peers[size_t(r)], collective_peers_msg{r, peers});
  std::vector<std::unique_ptr<MultiWorkerMirroredStrategy>> workers;
  for (int w = 0; w < 2; ++w)
    workers.push_back(std::make_unique<MultiWorkerMirroredStrategy>(
        runtime.system(),
        peer_worker_collective(runtime.system(), peers[size_t(w)], w,
                               {"/job:worker/task:0", "/job:worker/task:1"}, {}),
        std::vector<std::string>{"CPU:0"}));
  auto first = std::async(std::launch::async, [&] { return train(*workers[0], data, 0, 2); });
  Result second = train(*workers[1], data, 1, 2);
  Result chief = first.get();
  for (auto& p : peers) caf::anon_send_exit(p, caf::exit_reason::user_shutdown);

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

}  // namespace
