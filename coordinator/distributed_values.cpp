#include "coordinator/distributed_values.hpp"

namespace troupe {

DistributedValues::DistributedValues(Kind kind, std::vector<Tensor> values,
                                     std::vector<std::string> devices)
    : kind_(kind), values_(std::move(values)), devices_(std::move(devices)) {
  if (values_.empty()) throw invalid_argument("a distributed value needs at least one component");
  if (!devices_.empty() && devices_.size() != values_.size())
    throw invalid_argument("distributed value: " + std::to_string(values_.size()) +
                           " components but " + std::to_string(devices_.size()) + " devices");
}

const Tensor& DistributedValues::at(size_t i) const {
  if (i >= values_.size())
    throw out_of_range("component " + std::to_string(i) + " of a distributed value with " +
                       std::to_string(values_.size()) + " components");
  return values_[i];
}

std::string DistributedValues::description() const {
  std::string s = kind_ == Kind::mirrored ? "Mirrored:{" : "PerReplica:{";
  for (size_t i = 0; i < values_.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(i) + ": " + values_[i].description();
  }
  return s + "}";
}

}  // namespace troupe
