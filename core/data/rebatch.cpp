// _RebatchDataset, _LegacyRebatchDataset and the arithmetic that chooses their batch sizes.
#include "core/data/rebatch.hpp"

#include "core/data/node_helpers.hpp"

namespace troupe::data {
namespace {

// Leading dimension of the input's first component with a known one (kUnknownDim otherwise).
int64_t first_known_leading_dim(const ElementSpec& spec) {
  for (const auto& c : spec)
    if (!c.dims.empty() && c.dims[0] != kUnknownDim) return c.dims[0];
  return kUnknownDim;
}

// Holds the input batch being cut and hands out row ranges of it; shared by both rebatches.
class RowSource {
 public:
  RowSource(std::unique_ptr<IteratorBase> in, std::string who) : in_(std::move(in)), who_(who) {}
  /// Makes a current batch available; false at end of input.
  bool ensure() {
    while (!current_ || offset_ >= rows_) {
      if (done_) return false;
      auto e = in_->next();
      if (!e) {
        done_ = true;
        current_.reset();
        return false;
      }
      set_current(std::move(*e));
    }
    return true;
  }
  int64_t remaining() const { return current_ ? rows_ - offset_ : 0; }
  int64_t rows() const { return rows_; }
  /// The next n rows of each component (views, no copy).
  Element take(int64_t n) {
    Element out;
    for (const auto& t : *current_) out.push_back(t.slice_rows(offset_, offset_ + n));
    offset_ += n;
    return out;
  }
  bool done() const { return done_; }
  void drop_current() { current_.reset(); }
  void save(StateWriter& w) const {
    w.u64(done_);
    w.u64(current_.has_value());
    if (current_) {
      w.i64(offset_);
      w.element(*current_);
    }
    in_->save(w);
  }
  void restore(StateReader& r) {
    done_ = r.u64() != 0;
    current_.reset();
    if (r.u64()) {
      int64_t offset = r.i64();
      set_current(r.element());
      if (offset < 0 || offset > rows_) throw data_loss("iterator state: bad " + who_ + " offset");
      offset_ = offset;
    }
    in_->restore(r);
  }

 private:
  void set_current(Element e) {
    if (e.empty()) throw invalid_argument(who_ + ": element has no components");
    for (size_t c = 0; c < e.size(); ++c) {
      if (e[c].shape().rank() == 0)
        throw invalid_argument(who_ + ": input component " + std::to_string(c) +
                               " is a scalar; the input must be batched");
      if (e[c].shape()[0] != e[0].shape()[0])
        throw invalid_argument(who_ + ": input components have different batch sizes (" +
                               std::to_string(e[0].shape()[0]) + " and " +
                               std::to_string(e[c].shape()[0]) + ")");
    }
    rows_ = e[0].shape()[0];
    offset_ = 0;
    current_ = std::move(e);
  }

  std::unique_ptr<IteratorBase> in_;
  std::string who_;
  std::optional<Element> current_;
  int64_t rows_ = 0, offset_ = 0;
  bool done_ = false;
};

Element empty_batch(const ElementSpec& row_spec) {
  Element out;
  for (const auto& c : row_spec)
    out.push_back(empty_like_spec({c.dtype, batched_spec({c}, 0)[0].dims}));
  return out;
}

// ---- _RebatchDataset ------------------------------------------------------------------------

class RebatchNode : public UnaryNode {
 public:
  RebatchNode(NodePtr input, std::vector<int64_t> sizes, bool drop)
      : UnaryNode(std::move(input)), sizes_(std::move(sizes)), drop_(drop) {}
  std::string name() const override { return "rebatch"; }
  ElementSpec element_spec() const override {
    auto in = input_->element_spec();
    int64_t dim = rebatch_static_batch_dim(sizes_, first_known_leading_dim(in), drop_);
    return batched_spec(unbatched_spec(in, "rebatch"), dim);
  }
  int64_t cardinality() const override {
    return input_->cardinality() == kInfiniteCardinality ? kInfiniteCardinality
                                                         : kUnknownCardinality;
  }
  std::unique_ptr<IteratorBase> make_iterator(const IteratorContext& ctx) const override;

 protected:
  NodePtr rebuild(NodePtr input) const override {
    return std::make_shared<RebatchNode>(std::move(input), sizes_, drop_);
  }

 private:
  std::vector<int64_t> sizes_;
  bool drop_;
};

class RebatchIterator : public IteratorBase {
 public:
  RebatchIterator(std::unique_ptr<IteratorBase> in, std::vector<int64_t> sizes, bool drop,
                  ElementSpec row_spec)
      : rows_(std::move(in), "rebatch"),
        sizes_(std::move(sizes)),
        drop_(drop),
        row_spec_(std::move(row_spec)) {}
  std::optional<Element> next() override {
    if (rows_.done()) return std::nullopt;
    int64_t target = sizes_[cycle_];
    cycle_ = (cycle_ + 1) % sizes_.size();
    std::vector<Element> parts;
    int64_t have = 0;
    while (have < target && rows_.ensure()) {
      int64_t n = std::min(target - have, rows_.remaining());
      parts.push_back(rows_.take(n));
      have += n;
    }
    if (target > 0 && have == 0) return std::nullopt;
    if (drop_ && have < target) return std::nullopt;
    if (target == 0) return empty_batch(row_spec_);
    Element out;
    for (size_t c = 0; c < parts[0].size(); ++c) {
      std::vector<Tensor> pieces;
      for (auto& p : parts) pieces.push_back(p[c]);
      out.push_back(concat_rows(pieces, "rebatch"));
    }
    return out;
  }
  void save(StateWriter& w) const override {
    w.tag("rebatch");
    w.u64(cycle_);
    rows_.save(w);
  }
  void restore(StateReader& r) override {
    r.expect_tag("rebatch");
    cycle_ = r.u64();
    if (cycle_ >= sizes_.size()) throw data_loss("iterator state: rebatch cycle out of range");
    rows_.restore(r);
  }

 private:
  RowSource rows_;
  std::vector<int64_t> sizes_;
  bool drop_;
  ElementSpec row_spec_;
  size_t cycle_ = 0;
};

std::unique_ptr<IteratorBase> RebatchNode::make_iterator(const IteratorContext& ctx) const {
  return std::make_unique<RebatchIterator>(input_->make_iterator(ctx), sizes_, drop_,
                                           unbatched_spec(input_->element_spec(), "rebatch"));
}

// ---- _LegacyRebatchDataset ------------------------------------------------------------------

class LegacyRebatchNode : public UnaryNode {
 public:
  LegacyRebatchNode(NodePtr input, int64_t n) : UnaryNode(std::move(input)), n_(n) {}
  std::string name() const override { return "legacy_rebatch"; }
  ElementSpec element_spec() const override {
    return batched_spec(unbatched_spec(input_->element_spec(), "legacy_rebatch"), kUnknownDim);
  }
  int64_t cardinality() const override {
    int64_t c = input_->cardinality();
    return c < 0 ? c : c * n_;
  }
  std::unique_ptr<IteratorBase> make_iterator(const IteratorContext& ctx) const override;

 protected:
  NodePtr rebuild(NodePtr input) const override {
    return std::make_shared<LegacyRebatchNode>(std::move(input), n_);
  }

 private:
  int64_t n_;
};

class LegacyRebatchIterator : public IteratorBase {
 public:
  LegacyRebatchIterator(std::unique_ptr<IteratorBase> in, int64_t n)
      : rows_(std::move(in), "legacy_rebatch"), n_(n) {}
  std::optional<Element> next() override {
    if (piece_ == 0 && !rows_.ensure()) return std::nullopt;
    // Piece k of a batch of b rows is rows [k*p, (k+1)*p) clipped to b, with p = ceil(b/N).
    int64_t b = rows_.rows();
    int64_t p = (b + n_ - 1) / n_;
    int64_t take = std::min(p, rows_.remaining());
    Element out = rows_.take(take);
    if (++piece_ == n_) {
      piece_ = 0;
      rows_.drop_current();
    }
    return out;
  }
  void save(StateWriter& w) const override {
    w.tag("legacy_rebatch");
    w.i64(piece_);
    rows_.save(w);
  }
  void restore(StateReader& r) override {
    r.expect_tag("legacy_rebatch");
    piece_ = r.i64();
    if (piece_ < 0 || piece_ >= n_)
      throw data_loss("iterator state: legacy_rebatch piece out of range");
    rows_.restore(r);
  }

 private:
  RowSource rows_;
  int64_t n_;
  int64_t piece_ = 0;
};

std::unique_ptr<IteratorBase> LegacyRebatchNode::make_iterator(const IteratorContext& ctx) const {
  return std::make_unique<LegacyRebatchIterator>(input_->make_iterator(ctx), n_);
}

}  // namespace

std::vector<int64_t> batch_sizes_for_worker(int64_t global_batch_size, int64_t num_workers,
                                            int64_t replicas_per_worker, int64_t worker_index) {
  if (global_batch_size < 0 || num_workers <= 0 || replicas_per_worker <= 0)
    throw invalid_argument("batch_sizes_for_worker: need G >= 0, W > 0, R > 0 (got G=" +
                           std::to_string(global_batch_size) +
                           ", W=" + std::to_string(num_workers) +
                           ", R=" + std::to_string(replicas_per_worker) + ")");
  if (worker_index < 0 || worker_index >= num_workers)
    throw invalid_argument("batch_sizes_for_worker: worker index " + std::to_string(worker_index) +
                           " outside [0, " + std::to_string(num_workers) + ")");
  int64_t n = num_workers * replicas_per_worker;
  int64_t f = global_batch_size / n, c = global_batch_size % n;
  std::vector<int64_t> sizes(static_cast<size_t>(n));
  int64_t offset = worker_index * replicas_per_worker;
  for (int64_t k = 0; k < n; ++k) {
    int64_t j = (k + offset) % n;  // rotate worker 0's list left by offset
    sizes[size_t(k)] = j < c ? f + 1 : f;
  }
  return sizes;
}

std::vector<int64_t> batch_sizes_from_tensor(const Tensor& t) {
  if (t.shape().rank() > 1)
    throw invalid_argument("rebatch: batch_sizes " + t.description() +
                           ": expected a scalar or a vector");
  std::vector<int64_t> out;
  dispatch_dtype(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    for (T v : t.to_vector<T>()) out.push_back(int64_t(v));
  });
  return out;
}

int64_t rebatch_static_batch_dim(const std::vector<int64_t>& sizes, int64_t input_batch_dim,
                                 bool drop_remainder) {
  if (sizes.empty()) return kUnknownDim;
  for (auto s : sizes)
    if (s != sizes[0]) return kUnknownDim;
  int64_t size = sizes[0];
  bool partial_possible = !drop_remainder && (input_batch_dim == kUnknownDim || size == 0 ||
                                              input_batch_dim % size != 0);
  return partial_possible ? kUnknownDim : size;
}

int64_t compute_batch_size(const Dataset& dataset) {
  auto spec = dataset.element_spec();
  bool all_known = !spec.empty();
  int64_t common = kUnknownDim;
  bool differ = false;
  for (const auto& c : spec) {
    if (c.dims.empty() || c.dims[0] == kUnknownDim) {
      all_known = false;
      continue;
    }
    if (common != kUnknownDim && c.dims[0] != common) differ = true;
    common = c.dims[0];
  }
  if (all_known) return differ ? -1 : common;
  return dataset.node()->batch_size_walk();
}

Dataset Dataset::rebatch(std::vector<int64_t> batch_sizes, bool drop_remainder) const {
  if (batch_sizes.empty()) throw invalid_argument("rebatch: batch_sizes is empty");
  int64_t total = 0;
  for (auto s : batch_sizes) {
    if (s < 0) throw invalid_argument("rebatch: negative batch size " + std::to_string(s));
    total += s;
  }
  if (total == 0) throw invalid_argument("rebatch: batch_sizes are all 0");
  unbatched_spec(element_spec(), "rebatch");  // throws for scalar components
  return derive(std::make_shared<RebatchNode>(node_, std::move(batch_sizes), drop_remainder));
}

Dataset Dataset::legacy_rebatch(int64_t num_replicas) const {
  if (num_replicas <= 0)
    throw invalid_argument("legacy_rebatch: num_replicas must be > 0, got " +
                           std::to_string(num_replicas));
  unbatched_spec(element_spec(), "legacy_rebatch");
  return derive(std::make_shared<LegacyRebatchNode>(node_, num_replicas));
}

Dataset rebatch_for_worker(const Dataset& dataset, int64_t num_workers,
                           int64_t num_replicas_in_sync, int64_t worker_index) {
  if (num_workers <= 0) throw invalid_argument("rebatch: should have at least one worker");
  if (num_replicas_in_sync % num_workers != 0)
    throw invalid_argument("rebatch: number of replicas in sync (" +
                           std::to_string(num_replicas_in_sync) +
                           ") must be a multiple of the number of input workers (" +
                           std::to_string(num_workers) + ")");
  int64_t r = num_replicas_in_sync / num_workers;
  int64_t b = compute_batch_size(dataset);
  if (b == kNoBatchFound)
    throw invalid_argument(
        "rebatch: reached the dataset source without encountering a batch; "
        "call batch() on the input dataset before it can be split across " +
        std::to_string(num_replicas_in_sync) + " replicas");
  if (b < 0) return dataset.legacy_rebatch(num_replicas_in_sync).prefetch(r);
  return dataset.rebatch(batch_sizes_for_worker(b, num_workers, r, worker_index)).prefetch(r);
}

}  // namespace troupe::data
