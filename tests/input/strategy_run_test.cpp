// Distributed batches feed Strategy::run as PerReplica arguments: 2, 3 and 4 replicas over data
// the global batch does not divide; every replica's batch is checked, and reduce(MEAN, axis 0)
// gives the true mean of each global batch, the short last one included.
#include "core/data/rebatch.hpp"
#include "tests/input/input_test_util.hpp"

namespace troupe::testing {
namespace {

using data::Dataset;

class StrategyRunTest : public InputTest, public ::testing::WithParamInterface<int> {};

TEST_P(StrategyRunTest, RunOverUnevenDataGivesEachReplicaItsRowsAndTheTrueMean) {
  const int n = GetParam();
  const int64_t rows = 11, global = 4;
  std::vector<float> xs(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) xs[size_t(i)] = float(i);
  auto x = Tensor::from_vector<float>({rows}, xs);
  auto dist = distribute(n, Dataset::from_tensor_slices({x}).batch(global));
  auto sizes = data::batch_sizes_for_worker(global, 1, n, 0);

  auto it = dist.make_iterator();
  int64_t next_row = 0;
  size_t cycle = 0;
  int steps = 0;
  while (auto step = it.get_next_as_optional()) {
    ++steps;
    ASSERT_EQ(step->size(), 1u);
    const PerReplica& batch = (*step)[0];
    ASSERT_EQ(batch.size(), size_t(n));
    // Each replica holds the next rows of the stream, cut by the cycling rebatch sizes.
    int64_t first_row = next_row;
    for (int r = 0; r < n; ++r) {
      int64_t want = std::min(sizes[cycle++ % sizes.size()], rows - next_row);
      std::vector<float> expected(xs.begin() + next_row, xs.begin() + next_row + want);
      EXPECT_EQ(batch.at(size_t(r)).to_vector<float>(), expected)
          << "step " << steps << " replica " << r;
      next_row += want;
    }
    // The step function sees its own batch; doubling it on every replica and reducing with
    // MEAN over axis 0 must give twice the mean of this global batch's rows.
    auto doubled = strategy->run_one(
        [](ReplicaContext&, const std::vector<Tensor>& args) {
          auto v = args.at(0).to_vector<float>();
          for (auto& e : v) e *= 2;
          return Tensor::from_vector<float>({int64_t(v.size())}, v);
        },
        {batch});
    double sum = 0;
    for (int64_t i = first_row; i < next_row; ++i) sum += xs[size_t(i)];
    double mean = sum / double(next_row - first_row);
    EXPECT_NEAR(strategy->reduce(ReduceOp::mean, batch, 0).scalar<float>(), mean, 1e-5);
    EXPECT_NEAR(strategy->reduce(ReduceOp::mean, doubled, 0).scalar<float>(), 2 * mean, 1e-5);
    EXPECT_NEAR(strategy->reduce(ReduceOp::sum, doubled, 0).scalar<float>(), 2 * sum, 1e-4);
  }
  EXPECT_EQ(next_row, rows) << "every row reached exactly one replica";
  EXPECT_EQ(steps, 3);  // ceil(11 / 4) global batches
}

INSTANTIATE_TEST_SUITE_P(Replicas, StrategyRunTest, ::testing::Values(2, 3, 4),
                         [](const auto& info) { return "N" + std::to_string(info.param); });

}  // namespace
}  // namespace troupe::testing
