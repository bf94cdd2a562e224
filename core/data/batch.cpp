// batch(n, drop_remainder): stacks n consecutive elements into one.
#include "core/data/node_helpers.hpp"

namespace troupe::data {
namespace {

class BatchNode : public UnaryNode {
 public:
  BatchNode(NodePtr input, int64_t n, bool drop)
      : UnaryNode(std::move(input)), n_(n), drop_(drop) {}
  std::string name() const override { return "batch"; }
  ElementSpec element_spec() const override {
    return batched_spec(input_->element_spec(), drop_ ? n_ : kUnknownDim);
  }
  int64_t cardinality() const override {
    int64_t c = input_->cardinality();
    if (c < 0) return c;
    return drop_ ? c / n_ : (c + n_ - 1) / n_;
  }
  int64_t batch_size_walk() const override { return n_; }
  std::unique_ptr<IteratorBase> make_iterator(const IteratorContext& ctx) const override;

 protected:
  NodePtr rebuild(NodePtr input) const override {
    return std::make_shared<BatchNode>(std::move(input), n_, drop_);
  }

 private:
  int64_t n_;
  bool drop_;
};

class BatchIterator : public IteratorBase {
 public:
  BatchIterator(std::unique_ptr<IteratorBase> in, int64_t n, bool drop)
      : in_(std::move(in)), n_(n), drop_(drop) {}
  std::optional<Element> next() override {
    std::vector<Element> rows;
    while (int64_t(rows.size()) < n_) {
      auto e = in_->next();
      if (!e) break;
      rows.push_back(std::move(*e));
    }
    if (rows.empty() || (drop_ && int64_t(rows.size()) < n_)) return std::nullopt;
    Element out;
    for (size_t c = 0; c < rows[0].size(); ++c) {
      std::vector<Tensor> parts;
      parts.reserve(rows.size());
      for (auto& r : rows) {
        if (r.size() != rows[0].size())
          throw invalid_argument("batch: elements have " + std::to_string(r.size()) + " and " +
                                 std::to_string(rows[0].size()) + " components");
        parts.push_back(r[c]);
      }
      out.push_back(stack(parts, "batch: component " + std::to_string(c)));
    }
    return out;
  }
  void save(StateWriter& w) const override {
    w.tag("batch");
    in_->save(w);
  }
  void restore(StateReader& r) override {
    r.expect_tag("batch");
    in_->restore(r);
  }

 private:
  std::unique_ptr<IteratorBase> in_;
  int64_t n_;
  bool drop_;
};

std::unique_ptr<IteratorBase> BatchNode::make_iterator(const IteratorContext& ctx) const {
  return std::make_unique<BatchIterator>(input_->make_iterator(ctx), n_, drop_);
}

}  // namespace

Dataset Dataset::batch(int64_t n, bool drop_remainder) const {
  if (n <= 0) throw invalid_argument("batch: batch size must be > 0, got " + std::to_string(n));
  return derive(std::make_shared<BatchNode>(node_, n, drop_remainder));
}

}  // namespace troupe::data
