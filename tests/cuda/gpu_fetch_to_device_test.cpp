// InputOptions::experimental_fetch_to_device on GPU replicas: with it (the default) the batches a
// distributed iterator hands out are already in the memory of each replica's GPU, copied by the
// input worker's reader thread as it reads ahead; without it they stay in host memory (the step
// copies them). The values are the same either way, and a saved iterator state (a checkpoint's)
// holds the steps read ahead as host values, which a restore hands out again. Skips without a
// GPU.
#include <gtest/gtest.h>

#include "coordinator/device_inventory.hpp"
#include "coordinator/distributed_dataset.hpp"
#include "coordinator/mirrored_strategy.hpp"
#include "coordinator/runtime.hpp"
#include "kernels/cuda/device_memory.hpp"

namespace troupe {
namespace {

Tensor copy_to_host_if_needed(const Tensor& t) {
  return t.memory() == MemoryKind::gpu ? copy_to_host(t) : t;
}

class GpuFetchToDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (gpu_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }

  // Component 0 of both steps of range(0, 8) batched by 4 on one GPU replica.
  std::vector<Tensor> batches(bool fetch_to_device) {
    MirroredStrategy strategy(runtime.system(), {"GPU:0"});
    InputOptions options;
    options.experimental_fetch_to_device = fetch_to_device;
    auto dist = experimental_distribute_dataset(runtime.system(), strategy,
                                                data::Dataset::range(0, 8).batch(4), options);
    DistributedIterator it = dist.make_iterator();
    std::vector<Tensor> out;
    while (auto step = it.get_next_as_optional()) out.push_back(step->at(0).values().at(0));
    return out;
  }

  Runtime runtime;
};

TEST_F(GpuFetchToDevice, BatchesArriveInTheReplicasGpuMemoryOnlyWhenAskedFor) {
  const std::vector<Tensor> fetched = batches(true), host = batches(false);
  ASSERT_EQ(fetched.size(), 2u);
  ASSERT_EQ(host.size(), 2u);
  for (size_t s = 0; s < 2; ++s) {
    EXPECT_EQ(fetched[s].memory(), MemoryKind::gpu) << "step " << s;
    EXPECT_EQ(fetched[s].buffer()->device_index(), 0);
    EXPECT_EQ(host[s].memory(), MemoryKind::host) << "step " << s;
    EXPECT_TRUE(copy_to_host(fetched[s]).bitwise_equal(host[s])) << "step " << s;
  }
}

TEST_F(GpuFetchToDevice, ASavedStateHoldsTheStepsReadAheadInHostMemory) {
  MirroredStrategy strategy(runtime.system(), {"GPU:0"});
  InputOptions options;
  options.experimental_per_replica_buffer_size = 3;
  auto dist = experimental_distribute_dataset(runtime.system(), strategy,
                                              data::Dataset::range(0, 16).batch(4), options);
  DistributedIterator it = dist.make_iterator();
  const Tensor first = it.get_next().at(0).values().at(0);
  EXPECT_EQ(first.memory(), MemoryKind::gpu);
  const std::string state = it.save();  // steps read ahead are in GPU memory: copied back
  DistributedIterator again = dist.make_iterator();
  again.restore(state);
  for (int64_t step = 1; step < 4; ++step) {
    const Tensor batch = copy_to_host_if_needed(again.get_next().at(0).values().at(0));
    EXPECT_EQ(batch.to_vector<int64_t>(),
              (std::vector<int64_t>{4 * step, 4 * step + 1, 4 * step + 2, 4 * step + 3}))
        << "step " << step;
  }
}

}  // namespace
}  // namespace troupe
