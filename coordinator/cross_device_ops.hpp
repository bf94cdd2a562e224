#pragma once
// CrossDeviceOps (spec mirrored.md §2.6-2.7): how a MirroredStrategy reduces per-replica values.
// The algorithms themselves are the pure state machines of core/collective; here they run on the
// values of one process (inside merge_call, on the barrier's thread), and results are Mirrored on
// the destination devices. Host destinations share one result buffer: CPU "devices" of one process
// share memory, and variables copy into their own storage on assign.

#include <memory>
#include <string>
#include <vector>

#include "coordinator/distributed_values.hpp"
#include "core/collective/algorithm_choice.hpp"
#include "core/collective/transport_choice.hpp"
#include "core/reduce_op.hpp"
#include "kernels/ops.hpp"

namespace troupe {

/// One (value, destinations) pair of a batch_reduce.
struct ReducePair {
  DistributedValues value;
  std::vector<std::string> destinations;
};

/// Options of the all-reduce ops.
struct AllReduceOptions {
  int num_packs = 1;              ///< NCCL / hierarchical: concat-and-split packs (0 = no packing)
  int64_t bytes_per_pack = 0;     ///< collective ring: group by size (0 = one pack)
  int64_t chunk_bytes = 1 << 20;  ///< ring pipelining granularity
  /// ReplicaContext::all_reduce of at least this many bytes runs on the replicas' collective
  /// peer actors in parallel; smaller ones go through merge_call (one hop, lower latency).
  int64_t peer_threshold_bytes = 256 << 10;
  /// Ring only: replicas of one process meet in shared memory (two barriers, each sums its
  /// segment into one shared result) for every size; false runs the ring over the collective
  /// peer actors as between processes.
  bool shared_memory = true;
};

/// Base of the cross-device ops: argument checks, the single-component shortcut, broadcast.
class CrossDeviceOps {
 public:
  explicit CrossDeviceOps(std::shared_ptr<const KernelRegistry> kernels,
                          AllReduceOptions options = {});
  virtual ~CrossDeviceOps() = default;

  virtual CrossDeviceOpKind kind() const = 0;
  std::string name() const { return std::string(cross_device_op_name(kind())); }
  const AllReduceOptions& options() const { return options_; }
  /// Workers (processes) whose replicas this op reduces together: 1 except across processes.
  virtual int workers() const { return 1; }

  /// How an all-reduce of `bytes` over `replicas` travels with this op (choose_transport):
  /// asked by replica threads (one_thread_holds_all false) or by a merge function (true).
  Transport all_reduce_transport(int replicas, bool values_on_host, int64_t bytes,
                                 bool one_thread_holds_all) const;

  /// SUM or MEAN of value's components, Mirrored on `destinations` (non-empty).
  Mirrored reduce(ReduceOp op, const DistributedValues& value,
                  const std::vector<std::string>& destinations);
  /// reduce() for many pairs; all-reduce ops fuse them when every pair is an all-reduce.
  std::vector<Mirrored> batch_reduce(ReduceOp op, const std::vector<ReducePair>& pairs);
  /// `value` on every destination.
  Mirrored broadcast(const Tensor& value, const std::vector<std::string>& destinations) const;
  /// All-reduce by one n-ary sum over the components, on the calling thread: what small
  /// all-reduces inside merge_call use whatever the op, because for a few KiB the algorithm's
  /// messages cost more than the arithmetic.
  /// NcclAllReduce overrides it: GPU components cannot be summed on the host.
  virtual Mirrored reduce_in_place(ReduceOp op, const DistributedValues& value) {
    return broadcast(simple_reduce(op, value), value.devices());
  }

 protected:
  virtual Mirrored reduce_implementation(ReduceOp op, const DistributedValues& value,
                                         const std::vector<std::string>& destinations) = 0;
  virtual std::vector<Mirrored> batch_reduce_implementation(ReduceOp op,
                                                            const std::vector<ReducePair>& pairs);
  /// Sum of the components on the host, divided by their count for MEAN.
  Tensor simple_reduce(ReduceOp op, const DistributedValues& value) const;

  std::shared_ptr<const KernelRegistry> kernels_;
  Ops ops_;
  AllReduceOptions options_;
};

/// Reduce on one device, then broadcast (the universal fallback).
class ReductionToOneDevice : public CrossDeviceOps {
 public:
  /// `reduce_to_device` empty: the first destination (or the value's first device).
  explicit ReductionToOneDevice(std::shared_ptr<const KernelRegistry> kernels,
                                std::string reduce_to_device = "");
  CrossDeviceOpKind kind() const override { return CrossDeviceOpKind::reduction_to_one_device; }
  const std::string& reduce_to_device() const { return reduce_to_device_; }

 protected:
  Mirrored reduce_implementation(ReduceOp op, const DistributedValues& value,
                                 const std::vector<std::string>& destinations) override;

 private:
  std::string reduce_to_device_;
};

/// An all-reduce over the value's own devices with a core/collective algorithm (ring for
/// CollectiveAllReduce, the grouped tree for HierarchicalCopyAllReduce); anything that is not
/// an all-reduce falls back to ReductionToOneDevice, as upstream.
class AllReduceCrossDeviceOps : public CrossDeviceOps {
 public:
  AllReduceCrossDeviceOps(std::shared_ptr<const KernelRegistry> kernels, CrossDeviceOpKind kind,
                          AllReduceOptions options = {});
  CrossDeviceOpKind kind() const override { return kind_; }

 protected:
  Mirrored reduce_implementation(ReduceOp op, const DistributedValues& value,
                                 const std::vector<std::string>& destinations) override;
  std::vector<Mirrored> batch_reduce_implementation(ReduceOp op,
                                                    const std::vector<ReducePair>& pairs) override;

 private:
  std::vector<Mirrored> all_reduce(ReduceOp op, const std::vector<DistributedValues>& values);
  Mirrored all_reduce_one(ReduceOp op, const DistributedValues& value, int64_t index);

  CrossDeviceOpKind kind_;
  ReductionToOneDevice fallback_;
  int64_t next_instance_ = 1;
};

/// Builds the op named by `kind` (NcclAllReduce needs troupe_cuda and GPU replicas).
std::unique_ptr<CrossDeviceOps> make_cross_device_ops(CrossDeviceOpKind kind,
                                                      std::shared_ptr<const KernelRegistry> kernels,
                                                      AllReduceOptions options = {});

/// True when both lists hold the same set of devices (order ignored), as _devices_match.
bool devices_match(const std::vector<std::string>& a, const std::vector<std::string>& b);

}  // namespace troupe
