// Collectives through merge_call: one thread holds every replica's value, reduces it with the
// strategy's cross-device op (NCCL for GPU values) or gathers it, and hands each replica its
// result. One hop; in one process the gathered result is one buffer that every replica reads.
#include "coordinator/collectives/collective_transport.hpp"
#include "coordinator/replica_context.hpp"
#include "coordinator/strategy.hpp"
#include "core/packing.hpp"

namespace troupe {
namespace {

void require_host(const Tensor& value, const char* collective, const ReplicaContext& context) {
  if (value.memory() != MemoryKind::host)
    throw unimplemented(std::string(collective) + " of GPU values is not implemented: replica " +
                        std::to_string(context.replica_id_in_sync_group()) + " passed " +
                        value.description() + " on " + context.device());
}

class MergeCallTransport final : public CollectiveTransport {
 public:
  explicit MergeCallTransport(ReplicaContext& context) : context_(context) {}
  Transport kind() const override { return Transport::merge_call; }

  std::vector<Tensor> all_reduce(ReduceOp op, const std::vector<Tensor>& values) override {
    auto fn = [op](Strategy& s, const std::vector<PerReplica>& per_replica) {
      std::vector<DistributedValues> reduced;
      auto& cross_device = s.extended().cross_device_ops();
      for (auto& value : per_replica) reduced.push_back(cross_device.reduce_in_place(op, value));
      return reduced;
    };
    return context_.merge_call(fn, values,
                               std::string("all_reduce/") + std::string(reduce_op_name(op)));
  }

  Tensor broadcast(const Tensor& value, int root) override {
    require_host(value, "broadcast", context_);
    const int n = context_.strategy().num_local_replicas();
    if (root < 0 || root >= n)
      throw invalid_argument("broadcast root " + std::to_string(root) + " outside a group of " +
                             std::to_string(n) + " replicas");
    auto fn = [root](Strategy&, const std::vector<PerReplica>& per_replica) {
      const auto& v = per_replica.at(0);
      return std::vector<DistributedValues>{
          Mirrored({v.at(size_t(root))}, {v.devices().at(size_t(root))})};
    };
    return context_.merge_call(fn, {value}, "broadcast/" + std::to_string(root)).at(0);
  }

  Tensor all_gather(const Tensor& value) override {
    require_host(value, "all_gather", context_);
    auto fn = [](Strategy&, const std::vector<PerReplica>& per_replica) {
      return std::vector<DistributedValues>{Mirrored({concat_rows(per_replica.at(0).values())})};
    };
    return context_.merge_call(fn, {value}, "all_gather").at(0);
  }

 private:
  ReplicaContext& context_;
};

}  // namespace

std::unique_ptr<CollectiveTransport> make_merge_call_transport(ReplicaContext& context) {
  return std::make_unique<MergeCallTransport>(context);
}

}  // namespace troupe
