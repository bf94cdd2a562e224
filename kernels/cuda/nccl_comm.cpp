#include "kernels/cuda/nccl_comm.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

#include "core/status.hpp"

namespace troupe {

namespace {
void check_nccl(ncclResult_t result, const char* what) {
  if (result != ncclSuccess)
    throw internal_error(std::string(what) + " failed: " + ncclGetErrorString(result));
}

ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case DType::float32: return ncclFloat32;
    case DType::float64: return ncclFloat64;
    case DType::int32: return ncclInt32;
    case DType::int64: return ncclInt64;
  }
  throw invalid_argument("nccl: unsupported dtype " + std::to_string(int(dtype)));
}
}  // namespace

NcclCommunicators::NcclCommunicators(std::vector<int> devices) : devices_(std::move(devices)) {
  if (devices_.empty()) throw invalid_argument("NcclCommunicators: no devices given");
  comms_.assign(devices_.size(), nullptr);
  check_nccl(ncclCommInitAll(comms_.data(), int(devices_.size()), devices_.data()),
             "ncclCommInitAll");
}

NcclCommunicators::~NcclCommunicators() {
  for (ncclComm* comm : comms_)
    if (comm) ncclCommDestroy(comm);
}

void NcclCommunicators::all_reduce_sum(int rank, const void* send, void* recv, int64_t count,
                                       DType dtype, void* stream) const {
  if (rank < 0 || rank >= size())
    throw out_of_range("nccl all_reduce_sum: rank " + std::to_string(rank) + " outside [0, " +
                       std::to_string(size()) + ")");
  check_nccl(ncclAllReduce(send, recv, size_t(count), nccl_type(dtype), ncclSum,
                           comms_[size_t(rank)], static_cast<cudaStream_t>(stream)),
             "ncclAllReduce");
}

void NcclCommunicators::all_reduce_sum_all(const std::vector<const void*>& send,
                                           const std::vector<void*>& recv, int64_t count,
                                           DType dtype, const std::vector<void*>& streams) const {
  const size_t n = comms_.size();
  if (send.size() != n || recv.size() != n || streams.size() != n)
    throw invalid_argument("nccl all_reduce_sum_all: expected " + std::to_string(n) +
                           " send/recv/stream entries, got " + std::to_string(send.size()) + "/" +
                           std::to_string(recv.size()) + "/" + std::to_string(streams.size()));
  group_start();
  try {
    for (size_t r = 0; r < n; ++r)
      all_reduce_sum(int(r), send[r], recv[r], count, dtype, streams[r]);
  } catch (...) {
    ncclGroupEnd();
    throw;
  }
  group_end();
}

void NcclCommunicators::group_start() { check_nccl(ncclGroupStart(), "ncclGroupStart"); }
void NcclCommunicators::group_end() { check_nccl(ncclGroupEnd(), "ncclGroupEnd"); }

}  // namespace troupe
