#pragma once
// The factory of NcclAllReduce (spec mirrored.md §1.2, §2.7, §5.1), free of CUDA: a CUDA build
// returns the NCCL op of coordinator/cuda/nccl_all_reduce.hpp, a CPU-only build the generic
// all-reduce op of kind nccl_all_reduce (it can only meet CPU devices there, for which every
// NCCL op falls back to ReductionToOneDevice, as upstream).

#include <memory>

#include "coordinator/cross_device_ops.hpp"

namespace troupe {

/// NcclAllReduce(num_packs = options.num_packs) over the kernels of `kernels`.
std::unique_ptr<CrossDeviceOps> make_nccl_all_reduce(std::shared_ptr<const KernelRegistry> kernels,
                                                     AllReduceOptions options = {});

}  // namespace troupe
