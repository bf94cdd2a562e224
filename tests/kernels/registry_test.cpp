// The registry itself: keys, lookups, and the errors for missing or mismatched kernels.

#include "kernel_test_util.hpp"

namespace troupe {
namespace {

void dummy_elementwise(const ElementwiseArgs&) {}
void other_elementwise(const ElementwiseArgs&) {}

TEST(KernelRegistry, MissingKernelErrorNamesOpDeviceAndDtype) {
  KernelRegistry registry;
  EXPECT_TROUPE_ERROR(registry.find<ElementwiseArgs>("add", KernelDevice::gpu, DType::float64),
                      Code::not_found,
                      "no kernel registered for op 'add' on device gpu for dtype float64");
}

TEST(KernelRegistry, FindsWhatWasAdded) {
  KernelRegistry registry;
  registry.add<ElementwiseArgs>("noop", KernelDevice::cpu, DType::int32, dummy_elementwise);
  EXPECT_TRUE(registry.contains("noop", KernelDevice::cpu, DType::int32));
  EXPECT_FALSE(registry.contains("noop", KernelDevice::cpu, DType::int64));
  EXPECT_FALSE(registry.contains("noop", KernelDevice::gpu, DType::int32));
  EXPECT_EQ(registry.find<ElementwiseArgs>("noop", KernelDevice::cpu, DType::int32),
            &dummy_elementwise);
  EXPECT_EQ(registry.size(), 1u);
  EXPECT_EQ(registry.keys(), std::vector<std::string>{"noop/cpu/int32"});
}

TEST(KernelRegistry, DuplicateRegistrationIsRejected) {
  KernelRegistry registry;
  registry.add<ElementwiseArgs>("noop", KernelDevice::cpu, DType::int32, dummy_elementwise);
  EXPECT_TROUPE_ERROR(
      registry.add<ElementwiseArgs>("noop", KernelDevice::cpu, DType::int32, other_elementwise),
      Code::already_exists,
      "a kernel is already registered for op 'noop' on device cpu for dtype int32");
}

TEST(KernelRegistry, NullKernelIsRejected) {
  KernelRegistry registry;
  EXPECT_TROUPE_ERROR(registry.add<ElementwiseArgs>("noop", KernelDevice::gpu, DType::float32,
                                                    KernelFn<ElementwiseArgs>(nullptr)),
                      Code::invalid_argument, "null kernel for op 'noop' on device gpu");
}

TEST(KernelRegistry, LookupWithWrongArgsTypeIsAnError) {
  KernelRegistry registry;
  registry.add<ElementwiseArgs>("noop", KernelDevice::cpu, DType::float32, dummy_elementwise);
  EXPECT_TROUPE_ERROR(registry.find<MatmulArgs>("noop", KernelDevice::cpu, DType::float32),
                      Code::internal, "kernel for op 'noop' on device cpu for dtype float32 takes");
}

TEST(KernelRegistry, CpuRegistryCoversEveryOpAndDtype) {
  KernelRegistry registry = make_cpu_registry();
  const char* float_ops[] = {"add",
                             "scale",
                             "axpy",
                             "fill",
                             "copy",
                             "relu",
                             "relu_grad",
                             "sum_n",
                             "reduce_sum",
                             "bias_add_grad",
                             "matmul",
                             "bias_add",
                             "softmax_cross_entropy",
                             "gather_rows",
                             "scatter_add_rows",
                             "apply_sgd",
                             "apply_momentum",
                             "apply_adam",
                             "apply_adagrad",
                             "sparse_apply_sgd",
                             "sparse_apply_momentum",
                             "sparse_apply_adam",
                             "sparse_apply_adagrad"};
  for (const char* op : float_ops)
    for (DType dt : {DType::float32, DType::float64})
      EXPECT_TRUE(registry.contains(op, KernelDevice::cpu, dt)) << op << " " << dtype_name(dt);
  for (const char* op : {"add", "fill", "copy", "sum_n"})
    for (DType dt : {DType::int32, DType::int64})
      EXPECT_TRUE(registry.contains(op, KernelDevice::cpu, dt)) << op << " " << dtype_name(dt);
  EXPECT_FALSE(registry.contains("matmul", KernelDevice::cpu, DType::int32));
  EXPECT_FALSE(registry.contains("add", KernelDevice::gpu, DType::float32));
}

TEST(KernelRegistry, DeviceNamesAndMemoryMapping) {
  EXPECT_EQ(kernel_device_name(KernelDevice::cpu), "cpu");
  EXPECT_EQ(kernel_device_name(KernelDevice::gpu), "gpu");
  EXPECT_EQ(kernel_device_for(MemoryKind::host), KernelDevice::cpu);
  EXPECT_EQ(kernel_device_for(MemoryKind::gpu), KernelDevice::gpu);
}

TEST(KernelRegistry, OpsOnGpuTensorsWithoutGpuKernelsNameTheMissingKernel) {
  KernelRegistry registry = make_cpu_registry();
  Ops ops(registry);
  Tensor a = testing::fake_gpu_tensor(DType::float32, {4});
  Tensor out = testing::fake_gpu_tensor(DType::float32, {4});
  EXPECT_TROUPE_ERROR(ops.add(a, a, out), Code::not_found,
                      "no kernel registered for op 'add' on device gpu for dtype float32");
}

}  // namespace
}  // namespace troupe
