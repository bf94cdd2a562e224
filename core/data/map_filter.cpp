// map() and filter(): stateless per-element stages; their position is their input's.
#include "core/data/node_helpers.hpp"

namespace troupe::data {
namespace {

class MapNode : public UnaryNode {
 public:
  MapNode(NodePtr input, Dataset::MapFn fn, ElementSpec spec)
      : UnaryNode(std::move(input)), fn_(std::move(fn)), spec_(std::move(spec)) {}
  std::string name() const override { return "map"; }
  ElementSpec element_spec() const override { return spec_; }
  int64_t cardinality() const override { return input_->cardinality(); }
  std::unique_ptr<IteratorBase> make_iterator(const IteratorContext& ctx) const override;

 protected:
  NodePtr rebuild(NodePtr input) const override {
    return std::make_shared<MapNode>(std::move(input), fn_, spec_);
  }

 private:
  Dataset::MapFn fn_;
  ElementSpec spec_;
};

class MapIterator : public IteratorBase {
 public:
  MapIterator(std::unique_ptr<IteratorBase> in, Dataset::MapFn fn, ElementSpec spec)
      : in_(std::move(in)), fn_(std::move(fn)), spec_(std::move(spec)) {}
  std::optional<Element> next() override {
    auto e = in_->next();
    if (!e) return e;
    Element out = fn_(*e);
    if (out.size() != spec_.size())
      throw invalid_argument("map: function returned " + std::to_string(out.size()) +
                             " components, declared spec " + spec_to_string(spec_) + " has " +
                             std::to_string(spec_.size()));
    for (size_t c = 0; c < out.size(); ++c)
      if (!spec_[c].matches(out[c]))
        throw invalid_argument("map: component " + std::to_string(c) + " is " +
                               out[c].description() + ", declared " + spec_[c].to_string());
    return out;
  }
  void save(StateWriter& w) const override {
    w.tag("map");
    in_->save(w);
  }
  void restore(StateReader& r) override {
    r.expect_tag("map");
    in_->restore(r);
  }

 private:
  std::unique_ptr<IteratorBase> in_;
  Dataset::MapFn fn_;
  ElementSpec spec_;
};

std::unique_ptr<IteratorBase> MapNode::make_iterator(const IteratorContext& ctx) const {
  return std::make_unique<MapIterator>(input_->make_iterator(ctx), fn_, spec_);
}

class FilterNode : public PassThroughNode {
 public:
  FilterNode(NodePtr input, Dataset::Predicate pred)
      : PassThroughNode(std::move(input)), pred_(std::move(pred)) {}
  std::string name() const override { return "filter"; }
  ElementSpec element_spec() const override { return input_->element_spec(); }
  int64_t cardinality() const override {
    return input_->cardinality() == kInfiniteCardinality ? kInfiniteCardinality
                                                         : kUnknownCardinality;
  }
  std::unique_ptr<IteratorBase> make_iterator(const IteratorContext& ctx) const override;

 protected:
  NodePtr rebuild(NodePtr input) const override {
    return std::make_shared<FilterNode>(std::move(input), pred_);
  }

 private:
  Dataset::Predicate pred_;
};

class FilterIterator : public IteratorBase {
 public:
  FilterIterator(std::unique_ptr<IteratorBase> in, Dataset::Predicate pred)
      : in_(std::move(in)), pred_(std::move(pred)) {}
  std::optional<Element> next() override {
    while (auto e = in_->next())
      if (pred_(*e)) return e;
    return std::nullopt;
  }
  void save(StateWriter& w) const override {
    w.tag("filter");
    in_->save(w);
  }
  void restore(StateReader& r) override {
    r.expect_tag("filter");
    in_->restore(r);
  }

 private:
  std::unique_ptr<IteratorBase> in_;
  Dataset::Predicate pred_;
};

std::unique_ptr<IteratorBase> FilterNode::make_iterator(const IteratorContext& ctx) const {
  return std::make_unique<FilterIterator>(input_->make_iterator(ctx), pred_);
}

}  // namespace

Dataset Dataset::map(MapFn fn) const { return map(std::move(fn), element_spec()); }

Dataset Dataset::map(MapFn fn, ElementSpec output_spec) const {
  if (!fn) throw invalid_argument("map: empty function");
  return derive(std::make_shared<MapNode>(node_, std::move(fn), std::move(output_spec)));
}

Dataset Dataset::filter(Predicate pred) const {
  if (!pred) throw invalid_argument("filter: empty predicate");
  return derive(std::make_shared<FilterNode>(node_, std::move(pred)));
}

}  // namespace troupe::data
