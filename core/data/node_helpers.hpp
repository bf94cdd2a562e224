#pragma once
// Building blocks shared by the stages in core/data (internal: not part of the public API).

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/data/dataset.hpp"
#include "core/data/iterator_state.hpp"

namespace troupe::data {

/// A stage with one input; with_inputs() rebuilds it through rebuild().
class UnaryNode : public DatasetNode {
 public:
  explicit UnaryNode(NodePtr input) : input_(std::move(input)) {}
  std::vector<NodePtr> inputs() const override { return {input_}; }
  NodePtr with_inputs(std::vector<NodePtr> inputs) const override {
    if (inputs.size() != 1)
      throw invalid_argument(name() + ": expected 1 input, got " + std::to_string(inputs.size()));
    return rebuild(std::move(inputs[0]));
  }
  const NodePtr& input() const { return input_; }

 protected:
  virtual NodePtr rebuild(NodePtr input) const = 0;
  NodePtr input_;
};

/// A unary stage that keeps batch boundaries (shuffle, prefetch, repeat, take, ...), so the walk
/// for the batch size passes through it.
class PassThroughNode : public UnaryNode {
 public:
  using UnaryNode::UnaryNode;
  int64_t batch_size_walk() const override { return input_->batch_size_walk(); }
};

/// A source whose element i is a pure function of i (range, slices, generators, synthetic):
/// its whole position is one index.
class IndexedSourceNode : public DatasetNode {
 public:
  using ElementAt = std::function<std::optional<Element>(int64_t)>;
  /// Writes element i (i < cardinality) into `dst`, the same bytes `at` gives.
  using FillAt = std::function<void(int64_t, const RowDestination&)>;
  /// Elements [begin, begin + n) as one batch of views (IteratorBase::view_next), or nullopt.
  using ViewAt = std::function<std::optional<Element>(int64_t begin, int64_t n)>;
  IndexedSourceNode(std::string name, ElementSpec spec, int64_t cardinality, ElementAt at,
                    FillAt fill = nullptr, ViewAt view = nullptr)
      : name_(std::move(name)),
        spec_(std::move(spec)),
        cardinality_(cardinality),
        at_(std::move(at)),
        fill_(std::move(fill)),
        view_(std::move(view)) {}
  std::string name() const override { return name_; }
  ElementSpec element_spec() const override { return spec_; }
  int64_t cardinality() const override { return cardinality_; }
  int64_t batch_size_walk() const override { return kNoBatchFound; }
  std::unique_ptr<IteratorBase> make_iterator(const IteratorContext&) const override;

 private:
  std::string name_;
  ElementSpec spec_;
  int64_t cardinality_;
  ElementAt at_;
  FillAt fill_;  ///< optional: only sources with a known cardinality and fixed shapes have one
  ViewAt view_;  ///< optional: only sources that keep their rows (a materialised cache)
};

}  // namespace troupe::data
