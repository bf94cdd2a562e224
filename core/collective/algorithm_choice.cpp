#include "core/collective/algorithm_choice.hpp"

#include <algorithm>
#include <cctype>

#include "core/collective/hierarchical_copy.hpp"
#include "core/collective/reduce_to_one.hpp"
#include "core/collective/ring_all_reduce.hpp"

namespace troupe {
namespace {

bool mentions_gpu(std::string_view device) {
  std::string lower(device);
  for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  return lower.find("gpu") != std::string::npos;
}

}  // namespace

std::string_view cross_device_op_name(CrossDeviceOpKind kind) {
  switch (kind) {
    case CrossDeviceOpKind::reduction_to_one_device: return "ReductionToOneDevice";
    case CrossDeviceOpKind::nccl_all_reduce: return "NcclAllReduce";
    case CrossDeviceOpKind::hierarchical_copy: return "HierarchicalCopyAllReduce";
    case CrossDeviceOpKind::collective_all_reduce: return "CollectiveAllReduce";
  }
  return "unknown";
}

CrossDeviceOpKind select_cross_device_ops(const std::vector<std::string>& devices,
                                          const DeviceCapabilities& caps) {
  if (devices.empty()) throw invalid_argument("select_cross_device_ops: empty device list");
  if (caps.logical_gpus != caps.physical_gpus) return CrossDeviceOpKind::reduction_to_one_device;
  if (!std::all_of(devices.begin(), devices.end(),
                   [](const std::string& d) { return mentions_gpu(d); }))
    return CrossDeviceOpKind::reduction_to_one_device;
  return caps.nccl_available ? CrossDeviceOpKind::nccl_all_reduce
                             : CrossDeviceOpKind::reduction_to_one_device;
}

std::unique_ptr<CollectiveAlgorithm> make_collective(CrossDeviceOpKind kind,
                                                     const CollectiveSpec& spec) {
  switch (kind) {
    case CrossDeviceOpKind::reduction_to_one_device: return std::make_unique<ReduceToOne>(spec);
    case CrossDeviceOpKind::hierarchical_copy: return std::make_unique<HierarchicalCopy>(spec);
    case CrossDeviceOpKind::collective_all_reduce: return std::make_unique<RingAllReduce>(spec);
    case CrossDeviceOpKind::nccl_all_reduce: break;
  }
  throw invalid_argument("make_collective: " + std::string(cross_device_op_name(kind)) +
                         " has no CPU state machine; use the NCCL communicator");
}

}  // namespace troupe
