// Collectives of replicas that meet in shared memory (one process): all_reduce is the
// shared-memory rendezvous, where every replica sums its segment of the whole list on its own
// thread, reading the tensors where they are. broadcast and all_gather move no arithmetic, so
// they take merge_call, which in one process hands every replica the same buffer.
#include <algorithm>

#include "coordinator/collectives/collective_transport.hpp"
#include "coordinator/replica_context.hpp"
#include "core/packing.hpp"

namespace troupe {
namespace {

/// Positions of `values` grouped by dtype, in order of first appearance.
std::vector<std::pair<DType, std::vector<size_t>>> indices_by_dtype(
    const std::vector<Tensor>& values) {
  std::vector<std::pair<DType, std::vector<size_t>>> groups;
  for (size_t i = 0; i < values.size(); ++i) {
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& g) { return g.first == values[i].dtype(); });
    if (it == groups.end()) it = groups.insert(groups.end(), {values[i].dtype(), {}});
    it->second.push_back(i);
  }
  return groups;
}

class SharedMemoryTransport final : public CollectiveTransport {
 public:
  explicit SharedMemoryTransport(ReplicaContext& context)
      : context_(context), merge_(make_merge_call_transport(context)) {}
  Transport kind() const override { return Transport::shared_memory; }

  std::vector<Tensor> all_reduce(ReduceOp op, const std::vector<Tensor>& values) override {
    // Tensors of one dtype form one collective, in the same order on every replica.
    std::vector<Tensor> reduced(values.size());
    for (auto& [dtype, members] : indices_by_dtype(values)) {
      std::vector<Tensor> inputs;
      std::vector<Shape> shapes;
      for (size_t i : members) {
        inputs.push_back(values[i]);
        shapes.push_back(values[i].shape());
      }
      auto flat = context_.port().shared_memory_all_reduce(inputs, op == ReduceOp::mean);
      auto parts = split_flat(flat, shapes);
      for (size_t k = 0; k < members.size(); ++k) reduced[members[k]] = parts[k];
    }
    return reduced;
  }
  std::vector<Tensor> all_reduce_with_products(const std::vector<Tensor>& values,
                                               const std::vector<OuterProduct>& products) override {
    for (auto& v : values)
      if (v.dtype() != DType::float32)  // one collective per dtype: products join float32's
        return CollectiveTransport::all_reduce_with_products(values, products);
    std::vector<Shape> shapes;
    for (auto& v : values) shapes.push_back(v.shape());
    for (auto& p : products) shapes.push_back(Shape{p.lhs.shape()[1], p.rhs.shape()[1]});
    return split_flat(context_.port().shared_memory_all_reduce(values, products), shapes);
  }
  Tensor broadcast(const Tensor& value, int root) override {
    return merge_->broadcast(value, root);
  }
  Tensor all_gather(const Tensor& value) override { return merge_->all_gather(value); }

 private:
  ReplicaContext& context_;
  std::unique_ptr<CollectiveTransport> merge_;
};

}  // namespace

std::unique_ptr<CollectiveTransport> make_shared_memory_transport(ReplicaContext& context) {
  return std::make_unique<SharedMemoryTransport>(context);
}

}  // namespace troupe
