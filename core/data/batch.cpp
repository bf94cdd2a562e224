// batch(n, drop_remainder): stacks n consecutive elements into one.
#include <algorithm>

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
  BatchIterator(std::unique_ptr<IteratorBase> in, int64_t n, bool drop, ElementSpec row_spec,
                int64_t input_cardinality)
      : in_(std::move(in)), n_(n), drop_(drop), row_spec_(std::move(row_spec)) {
    // A batch never holds more rows than the input has: batch(1 << 30) over 10 examples must not
    // allocate a billion rows up front. Where that count is unknown, a batch larger than
    // kMaxFilledBytes is stacked from the rows that do arrive instead.
    capacity_ = input_cardinality >= 0 ? std::min(n_, input_cardinality) : n_;
    size_t row_bytes = 0;
    for (const auto& c : row_spec_)
      if (c.fully_defined())
        row_bytes += size_t(Shape(c.dims).num_elements()) * dtype_size(c.dtype);
    fill_ = spec_fully_defined(row_spec_) &&
            (input_cardinality >= 0 || double(capacity_) * double(row_bytes) <= kMaxFilledBytes);
  }
  std::optional<Element> next() override {
    if (fill_ && in_->fills_rows()) {
      if (auto view = in_->view_next(n_)) return view;  // rows the source keeps: no copy
      return fill_batch();
    }
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
  static constexpr double kMaxFilledBytes = double(int64_t(1) << 30);

  static bool spec_fully_defined(const ElementSpec& spec) {
    for (const auto& c : spec)
      if (!c.fully_defined()) return false;
    return !spec.empty();
  }

  // One tensor per component, allocated once (large ones come from core's block pool, so a
  // batch reuses the pages of one that was freed), and every element written into its row.
  std::optional<Element> fill_batch() {
    Element out;
    std::vector<size_t> row_bytes;
    for (const auto& c : row_spec_) {
      std::vector<int64_t> dims = c.dims;
      dims.insert(dims.begin(), capacity_);
      out.emplace_back(c.dtype, Shape(dims));
      row_bytes.push_back(size_t(Shape(c.dims).num_elements()) * dtype_size(c.dtype));
    }
    RowDestination dst(out.size());
    int64_t rows = 0;
    for (; rows < capacity_; ++rows) {
      for (size_t c = 0; c < out.size(); ++c)
        dst[c] = static_cast<char*>(out[c].raw_data()) + size_t(rows) * row_bytes[c];
      if (!in_->fill_next(dst)) break;
    }
    if (rows == 0 || (drop_ && rows < n_)) return std::nullopt;
    if (rows < capacity_)
      for (auto& t : out) t = t.slice_rows(0, rows).clone();  // the short last batch
    return out;
  }

  std::unique_ptr<IteratorBase> in_;
  int64_t n_;
  bool drop_;
  ElementSpec row_spec_;
  int64_t capacity_ = 0;  ///< rows allocated per filled batch
  bool fill_ = false;     ///< whether batches may be filled in place at all
};

std::unique_ptr<IteratorBase> BatchNode::make_iterator(const IteratorContext& ctx) const {
  return std::make_unique<BatchIterator>(input_->make_iterator(ctx), n_, drop_,
                                         input_->element_spec(), input_->cardinality());
}

}  // namespace

Dataset Dataset::batch(int64_t n, bool drop_remainder) const {
  if (n <= 0) throw invalid_argument("batch: batch size must be > 0, got " + std::to_string(n));
  return derive(std::make_shared<BatchNode>(node_, n, drop_remainder));
}

}  // namespace troupe::data
