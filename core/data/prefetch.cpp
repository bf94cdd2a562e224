// prefetch(n): a bounded read-ahead buffer, filled on pull in this layer. The dataset_iterator
// actor is what runs pulls ahead of demand; this stage bounds how far and keeps the buffered
// elements in the iterator's saved state.
#include <deque>

#include "core/data/node_helpers.hpp"

namespace troupe::data {
namespace {

class PrefetchNode : public PassThroughNode {
 public:
  PrefetchNode(NodePtr input, int64_t n) : PassThroughNode(std::move(input)), n_(n) {}
  std::string name() const override { return "prefetch"; }
  ElementSpec element_spec() const override { return input_->element_spec(); }
  int64_t cardinality() const override { return input_->cardinality(); }
  std::unique_ptr<IteratorBase> make_iterator(const IteratorContext& ctx) const override;

 protected:
  NodePtr rebuild(NodePtr input) const override {
    return std::make_shared<PrefetchNode>(std::move(input), n_);
  }

 private:
  int64_t n_;
};

class PrefetchIterator : public IteratorBase {
 public:
  PrefetchIterator(std::unique_ptr<IteratorBase> in, int64_t n) : in_(std::move(in)), n_(n) {}
  std::optional<Element> next() override {
    while (!done_ && int64_t(buffer_.size()) < n_) {
      auto e = in_->next();
      if (!e) {
        done_ = true;
        break;
      }
      buffer_.push_back(std::move(*e));
    }
    if (buffer_.empty()) return std::nullopt;
    Element out = std::move(buffer_.front());
    buffer_.pop_front();
    return out;
  }
  void save(StateWriter& w) const override {
    w.tag("prefetch");
    w.u64(done_);
    w.u64(buffer_.size());
    for (const auto& e : buffer_) w.element(e);
    in_->save(w);
  }
  void restore(StateReader& r) override {
    r.expect_tag("prefetch");
    done_ = r.u64() != 0;
    uint64_t n = r.u64();
    if (n > uint64_t(n_)) throw data_loss("iterator state: prefetch buffer over its bound");
    buffer_.clear();
    for (uint64_t i = 0; i < n; ++i) buffer_.push_back(r.element());
    in_->restore(r);
  }

 private:
  std::unique_ptr<IteratorBase> in_;
  int64_t n_;
  bool done_ = false;
  std::deque<Element> buffer_;
};

std::unique_ptr<IteratorBase> PrefetchNode::make_iterator(const IteratorContext& ctx) const {
  return std::make_unique<PrefetchIterator>(input_->make_iterator(ctx), n_);
}

}  // namespace

Dataset Dataset::prefetch(int64_t n) const {
  if (n <= 0) throw invalid_argument("prefetch: buffer size must be > 0, got " + std::to_string(n));
  return derive(std::make_shared<PrefetchNode>(node_, n));
}

}  // namespace troupe::data
