#pragma once
// A replica's collectives for one step: each call asks choose_transport (through the strategy's
// cross-device op) which transport carries it and runs it there. ReplicaContext owns one.

#include <memory>
#include <vector>

#include "coordinator/collectives/collective_transport.hpp"

namespace troupe {

/// all_reduce / broadcast / all_gather of one replica, over the transport chosen per call.
class ReplicaCollectives {
 public:
  explicit ReplicaCollectives(ReplicaContext& context);
  ~ReplicaCollectives();

  std::vector<Tensor> all_reduce(ReduceOp op, const std::vector<Tensor>& values);
  /// SUM of `values`, then of `products` (CollectiveTransport::all_reduce_with_products).
  std::vector<Tensor> all_reduce_with_products(const std::vector<Tensor>& values,
                                               const std::vector<OuterProduct>& products);
  Tensor broadcast(const Tensor& value, int root);
  Tensor all_gather(const Tensor& value);

  /// The transport the latest call took (identity before any).
  Transport last_transport() const { return last_; }

 private:
  CollectiveTransport& transport_for(const std::vector<Tensor>& values);
  CollectiveTransport& transport_for(int64_t bytes, bool on_host);
  void require_one_worker(const char* what) const;

  ReplicaContext& context_;
  std::unique_ptr<CollectiveTransport> identity_, merge_call_, shared_memory_, peer_actors_;
  Transport last_ = Transport::identity;
};

}  // namespace troupe
