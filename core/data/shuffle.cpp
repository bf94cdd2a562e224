// shuffle(buffer_size, seed): TensorFlow's buffered shuffle. The buffer is filled with the first
// buffer_size elements; each pull emits a uniformly chosen buffered element and puts the next
// input element in its place. Choices come from Philox(seed, epoch) at a counter that is part of
// the saved state, so a restored iterator makes the same choices.

#include "core/data/node_helpers.hpp"
#include "core/random.hpp"

namespace troupe::data {
namespace {

class ShuffleNode : public PassThroughNode {
 public:
  ShuffleNode(NodePtr input, int64_t buffer, uint64_t seed, bool reshuffle)
      : PassThroughNode(std::move(input)), buffer_(buffer), seed_(seed), reshuffle_(reshuffle) {}
  std::string name() const override { return "shuffle"; }
  ElementSpec element_spec() const override { return input_->element_spec(); }
  int64_t cardinality() const override { return input_->cardinality(); }
  std::unique_ptr<IteratorBase> make_iterator(const IteratorContext& ctx) const override;

 protected:
  NodePtr rebuild(NodePtr input) const override {
    return std::make_shared<ShuffleNode>(std::move(input), buffer_, seed_, reshuffle_);
  }

 private:
  int64_t buffer_;
  uint64_t seed_;
  bool reshuffle_;
};

class ShuffleIterator : public IteratorBase {
 public:
  ShuffleIterator(std::unique_ptr<IteratorBase> in, int64_t capacity, Philox rng)
      : in_(std::move(in)), capacity_(capacity), rng_(rng) {}

  std::optional<Element> next() override {
    while (!input_done_ && int64_t(buffer_.size()) < capacity_) {
      auto e = in_->next();
      if (!e) {
        input_done_ = true;
        break;
      }
      buffer_.push_back(std::move(*e));
    }
    if (buffer_.empty()) return std::nullopt;
    size_t j = size_t(rng_.bits(counter_++) % buffer_.size());
    Element out = std::move(buffer_[j]);
    // Refill the slot from the input at the next pull; here just close the gap.
    buffer_[j] = std::move(buffer_.back());
    buffer_.pop_back();
    return out;
  }
  void save(StateWriter& w) const override {
    w.tag("shuffle");
    w.u64(counter_);
    w.u64(input_done_);
    w.u64(buffer_.size());
    for (const auto& e : buffer_) w.element(e);
    in_->save(w);
  }
  void restore(StateReader& r) override {
    r.expect_tag("shuffle");
    counter_ = r.u64();
    input_done_ = r.u64() != 0;
    uint64_t n = r.u64();
    if (n > uint64_t(capacity_))
      throw data_loss("iterator state: shuffle buffer of " + std::to_string(n) +
                      " elements exceeds its capacity " + std::to_string(capacity_));
    buffer_.clear();
    for (uint64_t i = 0; i < n; ++i) buffer_.push_back(r.element());
    in_->restore(r);
  }

 private:
  std::unique_ptr<IteratorBase> in_;
  int64_t capacity_;
  Philox rng_;
  uint64_t counter_ = 0;
  bool input_done_ = false;
  std::vector<Element> buffer_;
};

std::unique_ptr<IteratorBase> ShuffleNode::make_iterator(const IteratorContext& ctx) const {
  Philox rng(seed_, reshuffle_ ? ctx.epoch : 0);
  return std::make_unique<ShuffleIterator>(input_->make_iterator(ctx), buffer_, rng);
}

}  // namespace

Dataset Dataset::shuffle(int64_t buffer_size, uint64_t seed, bool reshuffle_each_iteration) const {
  if (buffer_size <= 0)
    throw invalid_argument("shuffle: buffer_size must be > 0, got " + std::to_string(buffer_size));
  return derive(std::make_shared<ShuffleNode>(node_, buffer_size, seed, reshuffle_each_iteration));
}

}  // namespace troupe::data
