#include "coordinator/collectives/replica_collectives.hpp"

#include "coordinator/replica_context.hpp"
#include "coordinator/strategy.hpp"

namespace troupe {
namespace {

/// The one transport of a group of one: every collective returns its input.
class IdentityTransport final : public CollectiveTransport {
 public:
  Transport kind() const override { return Transport::identity; }
  std::vector<Tensor> all_reduce(ReduceOp, const std::vector<Tensor>& values) override {
    return values;
  }
  Tensor broadcast(const Tensor& value, int root) override {
    if (root != 0)
      throw invalid_argument("broadcast root " + std::to_string(root) +
                             " outside a group of 1 replica");
    return value;
  }
  Tensor all_gather(const Tensor& value) override { return value; }
};

}  // namespace

std::vector<Tensor> CollectiveTransport::all_reduce_with_products(
    const std::vector<Tensor>& values, const std::vector<OuterProduct>& products) {
  return all_reduce(ReduceOp::sum, with_products_formed(values, products));
}

ReplicaCollectives::ReplicaCollectives(ReplicaContext& context) : context_(context) {}
ReplicaCollectives::~ReplicaCollectives() = default;

CollectiveTransport& ReplicaCollectives::transport_for(const std::vector<Tensor>& values) {
  int64_t bytes = 0;
  bool on_host = true;
  for (auto& v : values) {
    bytes += int64_t(v.byte_size());
    on_host = on_host && v.memory() == MemoryKind::host;
  }
  return transport_for(bytes, on_host);
}

CollectiveTransport& ReplicaCollectives::transport_for(int64_t bytes, bool on_host) {
  last_ = context_.strategy().extended().cross_device_ops().all_reduce_transport(
      context_.strategy().num_local_replicas(), on_host, bytes, false);
  auto pick = [&](std::unique_ptr<CollectiveTransport>& slot, auto make) -> CollectiveTransport& {
    if (!slot) slot = make(context_);
    return *slot;
  };
  switch (last_) {
    case Transport::shared_memory: return pick(shared_memory_, make_shared_memory_transport);
    case Transport::peer_actors: return pick(peer_actors_, make_peer_actor_transport);
    case Transport::identity:
      return pick(identity_, [](ReplicaContext&) -> std::unique_ptr<CollectiveTransport> {
        return std::make_unique<IdentityTransport>();
      });
    default: return pick(merge_call_, make_merge_call_transport);
  }
}

std::vector<Tensor> ReplicaCollectives::all_reduce(ReduceOp op, const std::vector<Tensor>& values) {
  return transport_for(values).all_reduce(op, values);
}

std::vector<Tensor> ReplicaCollectives::all_reduce_with_products(
    const std::vector<Tensor>& values, const std::vector<OuterProduct>& products) {
  int64_t bytes = outer_product_bytes(products);  // host float32: their GEMM runs on this CPU
  for (auto& v : values) bytes += int64_t(v.byte_size());
  bool on_host = true;
  for (auto& v : values) on_host = on_host && v.memory() == MemoryKind::host;
  return transport_for(bytes, on_host).all_reduce_with_products(values, products);
}

// Across workers only all_reduce exists so far: a local broadcast or gather would silently
// leave the other workers' replicas out.
void ReplicaCollectives::require_one_worker(const char* what) const {
  const int workers = context_.strategy().num_workers();
  if (workers > 1)
    throw unimplemented(std::string("ReplicaContext::") + what + " across " +
                        std::to_string(workers) +
                        " workers is not supported (all_reduce is); reduce with all_reduce or "
                        "run with one worker");
}

Tensor ReplicaCollectives::broadcast(const Tensor& value, int root) {
  require_one_worker("broadcast");
  return transport_for({value}).broadcast(value, root);
}

Tensor ReplicaCollectives::all_gather(const Tensor& value) {
  require_one_worker("all_gather");
  return transport_for({value}).all_gather(value);
}

}  // namespace troupe
