// NcclAllReduce in a CPU-only build: there is no NCCL; see coordinator/nccl_all_reduce.hpp.
#include "coordinator/nccl_all_reduce.hpp"

namespace troupe {

std::unique_ptr<CrossDeviceOps> make_nccl_all_reduce(std::shared_ptr<const KernelRegistry> kernels,
                                                     AllReduceOptions options) {
  return std::make_unique<AllReduceCrossDeviceOps>(std::move(kernels),
                                                   CrossDeviceOpKind::nccl_all_reduce, options);
}

}  // namespace troupe
