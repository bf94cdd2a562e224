// Device memory helpers and the NCCL communicator wrapper.

#include "gpu_test_util.hpp"
#include "kernels/cuda/nccl_comm.hpp"

namespace troupe {
namespace {

class CudaMemory : public testing::GpuTest {};

TEST_F(CudaMemory, RoundTripKeepsBytesAndMarksGpuMemory) {
  Tensor host = Tensor::random_uniform({17, 3}, 1, -1, 1, DType::float64);
  Tensor dev = copy_to_gpu(host, 0);
  EXPECT_EQ(dev.memory(), MemoryKind::gpu);
  EXPECT_EQ(dev.shape(), host.shape());
  EXPECT_TRUE(copy_to_host(dev).bitwise_equal(host));
  Tensor empty = copy_to_gpu(Tensor(DType::float32, {0}), 0);
  EXPECT_EQ(copy_to_host(empty).num_elements(), 0);
}

TEST_F(CudaMemory, WrongDirectionCopiesAreNamed) {
  Tensor host(DType::float32, {2});
  Tensor dev = copy_to_gpu(host, 0);
  try {
    copy_to_host(host);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("copy_to_host: float32[2] is not on a GPU"),
              std::string::npos);
  }
  try {
    copy_to_gpu(dev, 0);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("copy_to_gpu: float32[2] is already on a GPU"),
              std::string::npos);
  }
}

class CudaNccl : public testing::GpuTest {};

TEST_F(CudaNccl, AllReduceSumOverEveryLocalDevice) {
  const int n = gpu_device_count();
  std::vector<int> devices;
  for (int d = 0; d < n; ++d) devices.push_back(d);
  NcclCommunicators comms(devices);
  ASSERT_EQ(comms.size(), n);
  // Rank r contributes r + 1 everywhere: the sum is n (n + 1) / 2.
  std::vector<Tensor> bufs;
  std::vector<std::unique_ptr<GpuStream>> streams;
  std::vector<const void*> send;
  std::vector<void*> recv, raw_streams;
  for (int r = 0; r < n; ++r) {
    bufs.push_back(copy_to_gpu(Tensor::filled<float>({1000}, float(r + 1)), r));
    streams.push_back(std::make_unique<GpuStream>(r));
    send.push_back(bufs.back().raw_data());
    recv.push_back(bufs.back().raw_data());
    raw_streams.push_back(streams.back()->context().stream);
  }
  comms.all_reduce_sum_all(send, recv, 1000, DType::float32, raw_streams);
  for (int r = 0; r < n; ++r) {
    streams[size_t(r)]->synchronize();
    EXPECT_EQ(copy_to_host(bufs[size_t(r)]).to_vector<float>(),
              std::vector<float>(1000, float(n * (n + 1) / 2)));
  }
}

TEST_F(CudaNccl, EmptyDeviceListIsRejected) {
  try {
    NcclCommunicators comms({});
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NcclCommunicators: no devices given"), std::string::npos);
  }
}

}  // namespace
}  // namespace troupe
