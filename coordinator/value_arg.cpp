#include "coordinator/value_arg.hpp"

namespace troupe {

Tensor ValueArg::for_replica(size_t r, size_t n) const {
  if (!distributed_) return tensor_;
  if (distributed_->size() != n)
    throw invalid_argument("a distributed value with " + std::to_string(distributed_->size()) +
                           " components passed where " + std::to_string(n) +
                           " replicas run: " + distributed_->description());
  return distributed_->at(r);
}

}  // namespace troupe
