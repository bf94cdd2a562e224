#include "core/data/dataset.hpp"

#include "core/data/iterator_state.hpp"

namespace troupe::data {

std::string_view auto_shard_policy_name(AutoShardPolicy p) {
  switch (p) {
    case AutoShardPolicy::off: return "OFF";
    case AutoShardPolicy::auto_: return "AUTO";
    case AutoShardPolicy::file: return "FILE";
    case AutoShardPolicy::data: return "DATA";
    case AutoShardPolicy::hint: return "HINT";
  }
  return "?";
}

bool IteratorBase::fill_next(const RowDestination&) {
  throw unimplemented("this dataset stage cannot write elements into batch rows");
}

std::optional<Element> IteratorBase::view_next(int64_t) { return std::nullopt; }

NodePtr DatasetNode::with_inputs(std::vector<NodePtr> inputs) const {
  throw unimplemented("dataset stage '" + name() + "' cannot be rebuilt over new inputs");
}

NodePtr DatasetNode::with_files(std::vector<std::string>) const {
  throw not_found("dataset stage '" + name() + "' does not read files");
}

Dataset::Dataset(NodePtr node, AutoShardPolicy policy) : node_(std::move(node)), policy_(policy) {
  if (!node_) throw invalid_argument("Dataset: null pipeline node");
}

Iterator Dataset::make_iterator() const { return Iterator(node_); }

Iterator::Iterator(NodePtr node) : node_(std::move(node)), impl_(node_->make_iterator({})) {}

std::optional<Element> Iterator::next() { return impl_->next(); }

std::string Iterator::save() const {
  StateWriter w;
  impl_->save(w);
  return seal_state(w.bytes());
}

void Iterator::restore(std::string_view bytes) {
  StateReader r(unseal_state(bytes));
  // Restore into a fresh iterator and swap, so a failure leaves this one as it was.
  auto fresh = node_->make_iterator({});
  fresh->restore(r);
  if (!r.at_end()) throw data_loss("iterator state: trailing bytes after the last stage");
  impl_ = std::move(fresh);
}

}  // namespace troupe::data
