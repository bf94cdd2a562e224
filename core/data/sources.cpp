// In-memory sources: from_tensor_slices, range, from_generator.
#include "core/data/node_helpers.hpp"

namespace troupe::data {
namespace {

class IndexedIterator : public IteratorBase {
 public:
  IndexedIterator(std::string name, IndexedSourceNode::ElementAt at, IndexedSourceNode::FillAt fill,
                  IndexedSourceNode::ViewAt view, int64_t cardinality)
      : name_(std::move(name)),
        at_(std::move(at)),
        fill_(std::move(fill)),
        view_(std::move(view)),
        cardinality_(cardinality) {}
  std::optional<Element> next() override {
    if (done_ || (cardinality_ >= 0 && index_ >= cardinality_)) return std::nullopt;
    auto e = at_(index_);
    if (!e) {
      done_ = true;
      return std::nullopt;
    }
    ++index_;
    return e;
  }
  bool fills_rows() const override { return fill_ != nullptr && cardinality_ >= 0; }
  bool fill_next(const RowDestination& dst) override {
    if (done_ || index_ >= cardinality_) return false;
    fill_(index_, dst);
    ++index_;
    return true;
  }
  bool exhausted() const override { return done_ || (cardinality_ >= 0 && index_ >= cardinality_); }
  std::optional<Element> view_next(int64_t n) override {
    if (!view_ || done_ || n <= 0 || index_ + n > cardinality_) return std::nullopt;
    auto batch = view_(index_, n);
    if (batch) index_ += n;
    return batch;
  }
  void save(StateWriter& w) const override {
    w.tag(name_);
    w.i64(index_);
    w.u64(done_);
  }
  void restore(StateReader& r) override {
    r.expect_tag(name_);
    index_ = r.i64();
    done_ = r.u64() != 0;
    if (index_ < 0) throw data_loss("iterator state: negative index in '" + name_ + "'");
  }

 private:
  std::string name_;
  IndexedSourceNode::ElementAt at_;
  IndexedSourceNode::FillAt fill_;
  IndexedSourceNode::ViewAt view_;
  int64_t cardinality_;
  int64_t index_ = 0;
  bool done_ = false;
};

}  // namespace

std::unique_ptr<IteratorBase> IndexedSourceNode::make_iterator(const IteratorContext&) const {
  return std::make_unique<IndexedIterator>(name_, at_, fill_, view_, cardinality_);
}

Dataset Dataset::from_tensor_slices(std::vector<Tensor> tensors) {
  if (tensors.empty()) throw invalid_argument("from_tensor_slices: no tensors given");
  ElementSpec spec;
  int64_t rows = -1;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& t = tensors[i];
    if (t.shape().rank() == 0)
      throw invalid_argument("from_tensor_slices: tensor " + std::to_string(i) +
                             " is a scalar and cannot be sliced");
    if (rows >= 0 && t.shape()[0] != rows)
      throw invalid_argument("from_tensor_slices: tensor " + std::to_string(i) + " has " +
                             std::to_string(t.shape()[0]) + " rows, tensor 0 has " +
                             std::to_string(rows));
    rows = t.shape()[0];
    const auto& d = t.shape().dims();
    spec.push_back({t.dtype(), {d.begin() + 1, d.end()}});
  }
  auto at = [tensors = std::move(tensors)](int64_t i) -> std::optional<Element> {
    Element e;
    for (const auto& t : tensors) e.push_back(row_view(t, i));
    return e;
  };
  return Dataset(std::make_shared<IndexedSourceNode>("tensor_slices", spec, rows, at));
}

Dataset Dataset::range(int64_t start, int64_t stop, int64_t step) {
  if (step == 0) throw invalid_argument("range: step must not be 0");
  int64_t count = 0;
  if (step > 0 && stop > start) count = (stop - start + step - 1) / step;
  if (step < 0 && stop < start) count = (start - stop - step - 1) / -step;
  auto at = [start, step](int64_t i) -> std::optional<Element> {
    return Element{Tensor::from_scalar<int64_t>(start + i * step)};
  };
  return Dataset(
      std::make_shared<IndexedSourceNode>("range", ElementSpec{{DType::int64, {}}}, count, at));
}

Dataset Dataset::from_generator(Generator gen, ElementSpec spec, int64_t cardinality) {
  if (!gen) throw invalid_argument("from_generator: empty generator function");
  auto at = [gen = std::move(gen), spec](int64_t i) -> std::optional<Element> {
    auto e = gen(i);
    if (!e) return e;
    if (e->size() != spec.size())
      throw invalid_argument("from_generator: element " + std::to_string(i) + " has " +
                             std::to_string(e->size()) + " components, spec " +
                             spec_to_string(spec) + " has " + std::to_string(spec.size()));
    for (size_t c = 0; c < spec.size(); ++c)
      if (!spec[c].matches((*e)[c]))
        throw invalid_argument("from_generator: element " + std::to_string(i) + " component " +
                               std::to_string(c) + " is " + (*e)[c].description() + ", spec says " +
                               spec[c].to_string());
    return e;
  };
  return Dataset(
      std::make_shared<IndexedSourceNode>("generator", std::move(spec), cardinality, at));
}

}  // namespace troupe::data
