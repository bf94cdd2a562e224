#include "core/data/map_rows.hpp"

#include "core/data/node_helpers.hpp"

namespace troupe::data {
namespace {

class MapRowsNode : public UnaryNode {
 public:
  MapRowsNode(NodePtr input, RowMapFn fn, ElementSpec spec)
      : UnaryNode(std::move(input)), fn_(std::move(fn)), spec_(std::move(spec)) {}
  std::string name() const override { return "map_rows"; }
  ElementSpec element_spec() const override { return spec_; }
  int64_t cardinality() const override { return input_->cardinality(); }
  std::unique_ptr<IteratorBase> make_iterator(const IteratorContext& ctx) const override;

 protected:
  NodePtr rebuild(NodePtr input) const override {
    return std::make_shared<MapRowsNode>(std::move(input), fn_, spec_);
  }

 private:
  RowMapFn fn_;
  ElementSpec spec_;
};

class MapRowsIterator : public IteratorBase {
 public:
  MapRowsIterator(std::unique_ptr<IteratorBase> in, RowMapFn fn, ElementSpec in_spec,
                  ElementSpec out_spec)
      : in_(std::move(in)),
        fn_(std::move(fn)),
        in_spec_(std::move(in_spec)),
        out_spec_(std::move(out_spec)) {}
  std::optional<Element> next() override {
    auto e = in_->next();
    if (!e) return std::nullopt;
    if (e->size() != in_spec_.size())
      throw invalid_argument("map_rows: input element has " + std::to_string(e->size()) +
                             " components, its spec " + spec_to_string(in_spec_) + " has " +
                             std::to_string(in_spec_.size()));
    std::vector<const void*> in;
    for (size_t c = 0; c < e->size(); ++c) {
      if (!in_spec_[c].matches((*e)[c]))
        throw invalid_argument("map_rows: input component " + std::to_string(c) + " is " +
                               (*e)[c].description() + ", its spec says " +
                               in_spec_[c].to_string());
      in.push_back((*e)[c].raw_data());
    }
    Element out;
    RowDestination dst;
    for (const auto& c : out_spec_) {
      out.emplace_back(c.dtype, Shape(c.dims));
      dst.push_back(out.back().raw_data());
    }
    fn_(in, dst);
    return out;
  }
  bool fills_rows() const override { return in_->fills_rows(); }
  bool fill_next(const RowDestination& dst) override {
    if (scratch_.empty())
      for (const auto& c : in_spec_) {
        scratch_.emplace_back(c.dtype, Shape(c.dims));
        scratch_in_.push_back(scratch_.back().raw_data());
        scratch_dst_.push_back(scratch_.back().raw_data());
      }
    if (!in_->fill_next(scratch_dst_)) return false;
    fn_(scratch_in_, dst);
    return true;
  }
  void save(StateWriter& w) const override {
    w.tag("map_rows");
    in_->save(w);
  }
  void restore(StateReader& r) override {
    r.expect_tag("map_rows");
    in_->restore(r);
  }

 private:
  std::unique_ptr<IteratorBase> in_;
  RowMapFn fn_;
  ElementSpec in_spec_, out_spec_;
  std::vector<Tensor> scratch_;  ///< one input row, reused by fill_next
  std::vector<const void*> scratch_in_;
  RowDestination scratch_dst_;
};

std::unique_ptr<IteratorBase> MapRowsNode::make_iterator(const IteratorContext& ctx) const {
  return std::make_unique<MapRowsIterator>(input_->make_iterator(ctx), fn_, input_->element_spec(),
                                           spec_);
}

void check_fully_defined(const ElementSpec& spec, const char* which) {
  for (const auto& c : spec)
    if (!c.fully_defined())
      throw invalid_argument(std::string("map_rows: the ") + which + " spec " +
                             spec_to_string(spec) + " has unknown dimensions");
}

}  // namespace

Dataset map_rows(const Dataset& input, RowMapFn fn, ElementSpec output_spec) {
  if (!fn) throw invalid_argument("map_rows: empty function");
  check_fully_defined(input.element_spec(), "input");
  check_fully_defined(output_spec, "output");
  return Dataset(std::make_shared<MapRowsNode>(input.node(), std::move(fn), std::move(output_spec)),
                 input.auto_shard_policy());
}

}  // namespace troupe::data
