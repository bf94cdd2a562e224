// MirroredStrategy: device resolution, reduce_to / batch_reduce_to / update, and every
// cross-device op over replica counts {1,2,3,4,7} and element counts {0,1,odd,large}
// (spec mirrored.md §2.2, §2.6-2.13, §3).
#include "core/collective/closed_form.hpp"
#include "tests/coordinator/fixture.hpp"

using namespace troupe;
using namespace troupe::testing;

class Mirrored_ : public StrategyTest {};

namespace {
const char* kCpu0 = "/job:localhost/replica:0/task:0/device:CPU:0";
}

TEST_F(Mirrored_, T6_DevicesAreCanonicalizedAndCpuListsUseReductionToOneDevice) {
  MirroredStrategy s(runtime.system(), {"CPU:0", "/cpu:1"});
  EXPECT_EQ(s.extended().worker_devices(),
            (std::vector<std::string>{kCpu0, "/job:localhost/replica:0/task:0/device:CPU:1"}));
  EXPECT_EQ(s.extended().host_device(), kCpu0);
  EXPECT_EQ(s.extended().cross_device_ops().kind(), CrossDeviceOpKind::reduction_to_one_device);
  MirroredStrategy d(runtime.system());  // no GPU here: the CPU
  EXPECT_EQ(d.extended().worker_devices(), std::vector<std::string>{kCpu0});
}

TEST(MirroredDevices, ErrorsNameTheOffendingDevices) {
  expect_error(
      [] {
        resolve_mirrored_devices({"GPU:0", "/job:worker/task:0/device:GPU:0"}, 2);
      },
      {"localhost"});
  expect_error([] { resolve_mirrored_devices({"/job:worker/device:GPU:0"}, 2); }, {"task"});
  expect_error(
      [] {
        resolve_mirrored_devices(
            {"/job:worker/task:0/device:GPU:0", "/job:worker/task:1/device:GPU:0"}, 2);
      },
      {"multi-worker MirroredStrategy is not supported"});
  expect_error([] { resolve_mirrored_devices({"CPU:0", "/cpu:0"}, 0); }, {"listed twice"});
  expect_error([] { resolve_mirrored_devices({"GPU:1"}, 1); },
               {"'GPU:1' requested but this machine has 1 GPU(s)"});
  expect_error([] { resolve_mirrored_devices({"/device:XPU"}, 0); }, {"/device:XPU"});
}

TEST_F(Mirrored_, T1_BatchReduceToThenUpdateGivesTwoOnBothComponents) {
  MirroredStrategy s(runtime.system(), cpus(2));
  auto scope = s.scope();
  auto var = s.create_variable("Variable", scalar(0));
  s.run([&](ReplicaContext& c, const std::vector<Tensor>&) {
    c.merge_call(
        [&](Strategy& st, const std::vector<PerReplica>& args) {
          auto reduced = st.extended().batch_reduce_to(ReduceOp::sum, {{args[0], var}});
          st.extended().update(var,
                               [](Variable& v, const std::vector<Tensor>& a) {
                                 v.assign(a[0]);
                                 return v.read();
                               },
                               {reduced[0]});
          return std::vector<DistributedValues>{};
        },
        {scalar(1.0f)});
    return std::vector<Tensor>{};
  });
  EXPECT_EQ(var.components()[0].name(), "Variable");
  EXPECT_EQ(var.components()[1].name(), "Variable/replica_1");
  for (auto& c : var.components()) EXPECT_EQ(value_of(c.read()), 2.0f);
}

TEST_F(Mirrored_, T2_ReduceToTheVariableThenAssign) {
  MirroredStrategy s(runtime.system(), cpus(2));
  auto scope = s.scope();
  auto var = s.create_variable("Variable", scalar(0));
  s.run([&](ReplicaContext& c, const std::vector<Tensor>&) {
    c.merge_call(
        [&](Strategy& st, const std::vector<PerReplica>& args) {
          auto reduced = st.extended().reduce_to(ReduceOp::sum, args[0], var);
          var.assign(reduced);
          return std::vector<DistributedValues>{};
        },
        {scalar(1.0f)});
    return std::vector<Tensor>{};
  });
  for (auto& c : var.components()) EXPECT_EQ(value_of(c.read()), 2.0f);
}

TEST_F(Mirrored_, T4_OneDeviceStrategySameStepGivesOne) {
  OneDeviceStrategy s(runtime.system(), "CPU:0");
  auto scope = s.scope();
  auto var = s.create_variable("Variable", scalar(0));
  s.run([&](ReplicaContext& c, const std::vector<Tensor>&) {
    c.merge_call(
        [&](Strategy& st, const std::vector<PerReplica>& args) {
          var.assign(st.extended().reduce_to(ReduceOp::sum, args[0], var));
          return std::vector<DistributedValues>{};
        },
        {scalar(1.0f)});
    return std::vector<Tensor>{};
  });
  EXPECT_EQ(value_of(var.value()), 1.0f);
}

TEST_F(Mirrored_, T5_UpdateAssignsEveryComponentAndReturnsPerComponentResults) {
  MirroredStrategy s(runtime.system(), cpus(2));
  auto scope = s.scope();
  auto v = s.create_variable("v", scalar(5), {Sync::automatic, Aggregation::sum});
  auto results = s.extended().update(v, [](Variable& c, const std::vector<Tensor>&) {
    c.assign(scalar(1));
    return c.read();
  });
  ASSERT_EQ(results.size(), 2u);
  for (auto& r : results) EXPECT_EQ(value_of(r), 1.0f);
  for (auto& c : v.components()) EXPECT_EQ(value_of(c.read()), 1.0f);
}

TEST_F(Mirrored_, UpdateRejectsPerReplicaArguments) {
  MirroredStrategy s(runtime.system(), cpus(2));
  auto scope = s.scope();
  auto v = s.create_variable("v", scalar(0));
  expect_error(
      [&] {
        s.extended().update(v, [](Variable&, const std::vector<Tensor>&) { return Tensor(); },
                            {PerReplica({scalar(1), scalar(2)})});
      },
      {"update of 'v': PerReplica arguments are not allowed"});
}

TEST_F(Mirrored_, ReduceToRulesForMirroredAndPlainValues) {
  MirroredStrategy s(runtime.system(), cpus(2));
  auto& ext = s.extended();
  Mirrored fives({scalar(5), scalar(5)}, ext.worker_devices());
  auto same = ext.reduce_to(ReduceOp::mean, fives, fives);
  EXPECT_TRUE(same.at(0).shares_buffer_with(fives.at(0)));  // MEAN of Mirrored: no communication
  EXPECT_EQ(value_of(ext.reduce_to(ReduceOp::sum, fives, fives).at(1)), 10.0f);
  EXPECT_EQ(value_of(ext.reduce_to(ReduceOp::mean, scalar(3), kCpu0).at(0)), 3.0f);
  expect_error([&] { ext.reduce_to(ReduceOp::sum, scalar(3), kCpu0); },
               {"can not be reduced with SUM across 2 replicas"});
  expect_error([&] { ext.reduce_to(ReduceOp::sum, fives, std::vector<std::string>{}); },
               {"destinations can not be empty"});
  auto to_one = ext.reduce_to(ReduceOp::sum, PerReplica({scalar(1), scalar(3)}), "CPU:1");
  EXPECT_EQ(to_one.devices(),
            std::vector<std::string>{"/job:localhost/replica:0/task:0/device:CPU:1"});
  EXPECT_EQ(value_of(to_one.at(0)), 4.0f);
}

TEST_F(Mirrored_, ReduceToInReplicaContextIsRejected) {
  MirroredStrategy s(runtime.system(), cpus(2));
  expect_error(
      [&] {
        s.run([&](ReplicaContext&, const std::vector<Tensor>&) {
          s.extended().reduce_to(ReduceOp::sum, scalar(1), kCpu0);
          return std::vector<Tensor>{};
        });
      },
      {"reduce_to may only be called in cross-replica context"});
}

namespace {

Tensor contribution(int r, int64_t count, DType dtype) {
  return closed_form_input(r, count, dtype);
}
double expected_sum(int n, int64_t i) { return closed_form_sum(n, i); }

struct AllReduceCase {
  CrossDeviceOpKind op;
  int replicas;
  int64_t count;
  DType dtype;
};

std::string case_name(const ::testing::TestParamInfo<AllReduceCase>& info) {
  auto& c = info.param;
  std::string op = std::string(cross_device_op_name(c.op));
  return op + "_" + std::to_string(c.replicas) + "replicas_" + std::to_string(c.count) + "_" +
         std::string(dtype_name(c.dtype));
}

std::vector<AllReduceCase> all_cases() {
  std::vector<AllReduceCase> cases;
  for (auto op : {CrossDeviceOpKind::reduction_to_one_device,
                  CrossDeviceOpKind::collective_all_reduce, CrossDeviceOpKind::hierarchical_copy})
    for (int n : {1, 2, 3, 4, 7})
      for (int64_t count : {int64_t(0), int64_t(1), int64_t(1001), int64_t(300007)})
        cases.push_back({op, n, count, count == 1001 ? DType::int64 : DType::float32});
  return cases;
}

}  // namespace

class AllReduceThroughReplicas : public StrategyTest,
                                 public ::testing::WithParamInterface<AllReduceCase> {};

TEST_P(AllReduceThroughReplicas, SumAndMeanMatchClosedForm) {
  auto c = GetParam();
  MirroredOptions options;
  options.cross_device_ops = c.op;
  options.all_reduce.chunk_bytes = 4096;  // many chunks: exercises the pipeline
  MirroredStrategy s(runtime.system(), cpus(c.replicas), options);
  auto out = s.run([&](ReplicaContext& ctx, const std::vector<Tensor>&) {
    auto mine = contribution(ctx.replica_id_in_sync_group(), c.count, c.dtype);
    return ctx.all_reduce(ReduceOp::sum, std::vector<Tensor>{mine, mine});
  });
  ASSERT_EQ(out.size(), 2u);
  for (int r = 0; r < c.replicas; ++r) {
    const Tensor& t = out[0].at(size_t(r));
    ASSERT_EQ(t.num_elements(), c.count);
    dispatch_dtype(c.dtype, [&](auto zero) {
      using T = decltype(zero);
      for (int64_t i = 0; i < c.count; ++i)
        ASSERT_EQ(double(t.data<T>()[i]), expected_sum(c.replicas, i))
            << "replica " << r << " i " << i;
    });
    EXPECT_TRUE(out[1].at(size_t(r)).bitwise_equal(t));
  }
  if (c.dtype != DType::float32 || c.count == 0) return;
  auto mean = s.run_one([&](ReplicaContext& ctx, const std::vector<Tensor>&) {
    return ctx.all_reduce(ReduceOp::mean,
                          contribution(ctx.replica_id_in_sync_group(), c.count, c.dtype));
  });
  for (int64_t i : {int64_t(0), c.count - 1})
    EXPECT_FLOAT_EQ(mean.at(0).data<float>()[i], float(expected_sum(c.replicas, i) / c.replicas));
}

INSTANTIATE_TEST_SUITE_P(Ops, AllReduceThroughReplicas, ::testing::ValuesIn(all_cases()),
                         case_name);

TEST_F(Mirrored_, NegativeNumPacksIsRejectedWithTheValue) {
  MirroredOptions o;
  o.cross_device_ops = CrossDeviceOpKind::hierarchical_copy;
  o.all_reduce.num_packs = -1;
  expect_error([&] { MirroredStrategy s(runtime.system(), cpus(2), o); },
               {"requires num_packs >= 0, but -1 is specified"});
}

// The in-process ring sums host memory on the calling thread; a value on GPUs must be refused by
// name before anything reads it (tensors adopted as GPU memory stand in for cudaMalloc here).
TEST(AllReduceOps, RingInOneProcessRefusesGpuComponentsByName) {
  auto gpu_tensor = [] {
    auto* bytes = new float[4]{1, 2, 3, 4};
    auto buffer = std::make_shared<Buffer>(bytes, 4 * sizeof(float), MemoryKind::gpu, 0,
                                           [](void* p) { delete[] static_cast<float*>(p); });
    return Tensor(DType::float32, Shape{4}, buffer);
  };
  const std::vector<std::string> gpus{"/job:localhost/replica:0/task:0/device:GPU:0",
                                      "/job:localhost/replica:0/task:0/device:GPU:1"};
  for (auto kind :
       {CrossDeviceOpKind::collective_all_reduce, CrossDeviceOpKind::hierarchical_copy}) {
    auto ops = make_cross_device_ops(kind, default_kernels(), {});
    for (size_t values : {1u, 2u}) {  // one value, and a batch that would be packed
      std::vector<ReducePair> pairs;
      for (size_t k = 0; k < values; ++k)
        pairs.push_back({PerReplica({gpu_tensor(), gpu_tensor()}, gpus), gpus});
      expect_error([&] { ops->batch_reduce(ReduceOp::sum, pairs); },
                   {"reduces host memory", "lives on " + gpus[0], "nccl_all_reduce"});
    }
  }
}
