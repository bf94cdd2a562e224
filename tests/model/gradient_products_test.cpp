// Dense kernel gradients handed to the all-reduce as products (train/gradient_products.hpp), on
// a MirroredStrategy of 2 CPU replicas: the all-reduce of products gives the bits of the
// all-reduce of values (the MLP 784-256-10 at 64 rows per replica, and a deeper small MLP);
// Optimizer::apply_gradients takes either form to the same parameters, bit for bit, with a
// finite step and with a replica whose loss is NaN (skip_step); and wants_kernel_products asks
// for products only where every replica decides alike and the all-reduce can sum them.

#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>

#include "tests/coordinator/fixture.hpp"
#include "train/gradient_products.hpp"
#include "train/optimizer.hpp"
#include "train/registry.hpp"

using namespace troupe;
using namespace troupe::testing;

namespace {

class GradientProducts : public StrategyTest {
 protected:
  // The ring between CPU replicas: 2 of them of one process meet in shared memory.
  MirroredOptions ring() {
    return with_timeouts(std::chrono::seconds(30), CrossDeviceOpKind::collective_all_reduce);
  }
};

ModelConfig mlp(std::vector<int64_t> hidden, int64_t input_dim, int64_t classes) {
  ModelConfig c;
  c.input_dim = input_dim;
  c.hidden = std::move(hidden);
  c.classes = classes;
  c.seed = 5;
  return c;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.num_elements() * sizeof(float)) == 0;
}

// Replica r's batch: `rows` examples, labels r-dependent.
std::pair<Tensor, Tensor> batch_of(int replica, int64_t rows, int64_t dim, int64_t classes) {
  Tensor x = Tensor::random_normal({rows, dim}, uint64_t(100 + replica));
  Tensor y(DType::int64, {rows});
  for (int64_t i = 0; i < rows; ++i) y.data<int64_t>()[i] = (i * 7 + replica) % classes;
  return {x, y};
}

}  // namespace

TEST_F(GradientProducts, AllReduceOfProductsHasTheBitsOfTheAllReduceOfValues) {
  for (const ModelConfig& config : {mlp({256}, 784, 10), mlp({33, 17}, 20, 3)}) {
    MirroredStrategy s(runtime.system(), cpus(2), ring());
    auto scope = s.scope();
    auto model = make_mlp(config);
    std::vector<Tensor> params;
    for (auto& p : model->initial_parameters()) params.push_back(p.value);
    std::mutex mutex;
    int compared = 0, products_seen = 0;
    s.run([&](ReplicaContext& ctx, const std::vector<Tensor>&) {
      Ops ops(*s.kernels());
      auto [x, y] = batch_of(ctx.replica_id_in_sync_group(), 64, config.input_dim, config.classes);
      auto values = model->compute(ops, params, x, y, 128, true, GradientForm::values).grads;
      auto products =
          model->compute(ops, params, x, y, 128, true, GradientForm::kernel_products).grads;
      std::vector<Tensor> value_tensors;
      for (auto& g : values) value_tensors.push_back(g.values);
      auto from_values = ctx.all_reduce(ReduceOp::sum, value_tensors);
      auto from_products = all_reduce_gradients(ctx, s, ops, products);
      EXPECT_EQ(ctx.last_collective_transport(), Transport::shared_memory);
      std::lock_guard<std::mutex> lock(mutex);
      for (size_t k = 0; k < values.size(); ++k) {
        products_seen += products[k].is_product();
        EXPECT_TRUE(same_bits(from_values[k], from_products[k].reshape(from_values[k].shape())))
            << "gradient " << k << " of " << config.hidden.size() << "-hidden-layer MLP";
        ++compared;
      }
      return std::vector<Tensor>{};
    });
    EXPECT_EQ(compared, 2 * int(2 * (config.hidden.size() + 1)));
    EXPECT_EQ(products_seen, 2 * int(config.hidden.size() + 1));  // every kernel, each replica
  }
}

TEST_F(GradientProducts, OptimizerAppliesEitherFormToTheSameParameters) {
  const ModelConfig config = mlp({256}, 784, 10);
  auto train = [&](GradientForm form, OnNonFinite policy, bool nan_on_replica_1) {
    MirroredStrategy s(runtime.system(), cpus(2), ring());
    auto scope = s.scope();
    auto model = make_mlp(config);
    std::vector<DistributedVariable> vars;
    for (auto& p : model->initial_parameters()) vars.push_back(s.create_variable(p.name, p.value));
    Optimizer opt(s, {OptimizerKind::momentum, 0.05, 0.9}, vars);
    opt.set_on_non_finite(policy);
    for (int step = 0; step < 3; ++step)
      s.run([&](ReplicaContext& ctx, const std::vector<Tensor>&) {
        const int r = ctx.replica_id_in_sync_group();
        Ops ops(*s.kernels());
        auto [x, y] = batch_of(r + 2 * step, 64, config.input_dim, config.classes);
        if (nan_on_replica_1 && r == 1 && step == 1)
          x.data<float>()[5] = std::numeric_limits<float>::quiet_NaN();
        std::vector<Tensor> params;
        for (auto& v : vars) params.push_back(v.components().at(size_t(r)).read());
        auto out = model->compute(ops, params, x, y, 128, true, form);
        opt.apply_gradients(ctx, out.grads, ApplyPath::all_reduce,
                            std::isfinite(out.stats.loss_sum));
        return std::vector<Tensor>{};
      });
    std::vector<Tensor> result;
    for (auto& v : vars)
      for (auto& c : v.components()) result.push_back(c.read().clone());
    return std::make_pair(result, opt.skipped_steps());
  };
  for (bool nan : {false, true}) {
    auto [values, skipped_values] = train(GradientForm::values, OnNonFinite::skip_step, nan);
    auto [products, skipped_products] =
        train(GradientForm::kernel_products, OnNonFinite::skip_step, nan);
    EXPECT_EQ(skipped_values, nan ? 1 : 0);
    EXPECT_EQ(skipped_products, skipped_values);
    ASSERT_EQ(values.size(), products.size());
    for (size_t k = 0; k < values.size(); ++k)
      EXPECT_TRUE(same_bits(values[k], products[k])) << "parameter component " << k;
  }
  expect_error([&] { train(GradientForm::kernel_products, OnNonFinite::stop, true); },
               {"non-finite loss or gradients at training step 2 on replica 1"});
}

TEST_F(GradientProducts, WantedOnlyWhereEveryReplicaDecidesAlike) {
  MirroredStrategy two(runtime.system(), cpus(2), ring());
  EXPECT_TRUE(wants_kernel_products(two, true, "CPU:0", DType::float32, 64, 128));
  EXPECT_FALSE(wants_kernel_products(two, false, "CPU:0", DType::float32, 64, 128));  // merge
  EXPECT_FALSE(wants_kernel_products(two, true, "CPU:0", DType::float32, 65, 129));   // uneven
  EXPECT_FALSE(wants_kernel_products(two, true, "CPU:0", DType::float64, 64, 128));
  EXPECT_FALSE(wants_kernel_products(two, true, "GPU:0", DType::float32, 64, 128));
  MirroredStrategy one(runtime.system(), cpus(1));
  EXPECT_FALSE(wants_kernel_products(one, true, "CPU:0", DType::float32, 64, 64));
}
