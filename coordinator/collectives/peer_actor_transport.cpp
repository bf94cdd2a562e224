// Collectives over the replicas' collective peer actors: each replica hands its tensor to its
// own peer, whose ring (or tree) messages reach the other replicas' peers — in this process, or
// through CAF's middleman in others — so reductions run in parallel on the peers' threads.
// broadcast and all_gather are sums in which every other replica contributes zeros: exact, and
// carried by the same state machines, at the price of moving the zeros as well.
#include <cstring>

#include "coordinator/collectives/collective_transport.hpp"
#include "coordinator/replica_context.hpp"
#include "coordinator/strategy.hpp"
#include "coordinator/tensor_fusion.hpp"
#include "coordinator/tensor_reductions.hpp"

namespace troupe {
namespace {

class PeerActorTransport final : public CollectiveTransport {
 public:
  explicit PeerActorTransport(ReplicaContext& context)
      : context_(context), cross_device_(context.strategy().extended().cross_device_ops()) {}
  Transport kind() const override { return Transport::peer_actors; }

  std::vector<Tensor> all_reduce(ReduceOp op, const std::vector<Tensor>& values) override {
    TensorFusion fusion(cross_device_.kind(), cross_device_.options(), values);
    Ops ops(*context_.strategy().kernels());
    std::vector<Tensor> reduced;
    for (size_t p = 0; p < fusion.packs().size(); ++p) {
      const Tensor& pack = fusion.packs()[p];
      Tensor sum = sum_over_peers(pack, int64_t(p));
      if (op == ReduceOp::mean) sum = divided(ops, sum, context_.strategy().num_local_replicas());
      reduced.push_back(sum.reshape(pack.shape()));
    }
    return fusion.unpack(reduced);
  }

  Tensor broadcast(const Tensor& value, int root) override {
    const int n = context_.strategy().num_local_replicas();
    if (root < 0 || root >= n)
      throw invalid_argument("broadcast root " + std::to_string(root) + " outside a group of " +
                             std::to_string(n) + " replicas");
    const bool mine = context_.replica_id_in_sync_group() == root;
    Tensor contribution = mine ? value : Tensor::zeros(value.dtype(), value.shape());
    return sum_over_peers(contribution.reshape({value.num_elements()}), 0).reshape(value.shape());
  }

  Tensor all_gather(const Tensor& value) override {
    if (value.shape().rank() == 0)
      throw invalid_argument("all_gather of " + value.description() + ": a scalar has no rows");
    const int n = context_.strategy().num_local_replicas();
    const int me = context_.replica_id_in_sync_group();
    // Every replica's row count first (dimension 0 may differ), then the rows at their offsets.
    Tensor counts = Tensor::zeros(DType::int64, {n});
    counts.data<int64_t>()[me] = value.shape()[0];
    Tensor all_counts = sum_over_peers(counts, 0);
    int64_t rows = 0, offset = 0;
    for (int r = 0; r < n; ++r) {
      if (r == me) offset = rows;
      rows += all_counts.data<int64_t>()[r];
    }
    Shape shape = value.shape().with_leading(rows);
    Tensor mine = Tensor::zeros(value.dtype(), shape);
    const size_t row_bytes = value.shape()[0] ? value.byte_size() / size_t(value.shape()[0]) : 0;
    if (value.byte_size())
      std::memcpy(static_cast<char*>(mine.raw_data()) + size_t(offset) * row_bytes,
                  value.raw_data(), value.byte_size());
    return sum_over_peers(mine.reshape({mine.num_elements()}), 1).reshape(shape);
  }

 private:
  Tensor sum_over_peers(const Tensor& flat, int64_t index) {
    CollectiveCall call{int(cross_device_.kind()), cross_device_.options().chunk_bytes, index};
    return context_.port().collective(call, flat);
  }

  ReplicaContext& context_;
  const CrossDeviceOps& cross_device_;
};

}  // namespace

std::unique_ptr<CollectiveTransport> make_peer_actor_transport(ReplicaContext& context) {
  return std::make_unique<PeerActorTransport>(context);
}

}  // namespace troupe
