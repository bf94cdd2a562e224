// Stages that only count: repeat, take, skip, shard.
#include "core/data/node_helpers.hpp"

namespace troupe::data {
namespace {

// ---- repeat ---------------------------------------------------------------------------------

class RepeatNode : public PassThroughNode {
 public:
  RepeatNode(NodePtr input, int64_t count) : PassThroughNode(std::move(input)), count_(count) {}
  std::string name() const override { return "repeat"; }
  ElementSpec element_spec() const override { return input_->element_spec(); }
  int64_t cardinality() const override {
    int64_t c = input_->cardinality();
    if (c == 0 || count_ == 0) return 0;
    if (count_ < 0) return kInfiniteCardinality;
    return c < 0 ? c : c * count_;
  }
  std::unique_ptr<IteratorBase> make_iterator(const IteratorContext& ctx) const override;

 protected:
  NodePtr rebuild(NodePtr input) const override {
    return std::make_shared<RepeatNode>(std::move(input), count_);
  }

 private:
  int64_t count_;
};

class RepeatIterator : public IteratorBase {
 public:
  RepeatIterator(NodePtr input, int64_t count, IteratorContext ctx)
      : input_(std::move(input)), count_(count), parent_(ctx) {
    start_epoch();
  }
  std::optional<Element> next() override {
    while (in_) {
      if (auto e = in_->next()) {
        produced_in_epoch_ = true;
        return e;
      }
      // An epoch that produced nothing would make repeat() spin forever: end instead.
      if (!produced_in_epoch_) break;
      ++epoch_;
      start_epoch();
    }
    in_.reset();
    return std::nullopt;
  }
  bool fills_rows() const override { return in_ && in_->fills_rows(); }
  bool fill_next(const RowDestination& dst) override {
    while (in_) {
      if (in_->fill_next(dst)) {
        produced_in_epoch_ = true;
        return true;
      }
      if (!produced_in_epoch_) break;
      ++epoch_;
      start_epoch();
    }
    in_.reset();
    return false;
  }
  // Within one epoch only: a batch across an epoch's end is filled (fill_next starts the next).
  std::optional<Element> view_next(int64_t n) override {
    if (in_ && in_->exhausted() && produced_in_epoch_) {  // what next() does at an epoch's end
      ++epoch_;
      start_epoch();
    }
    if (!in_) return std::nullopt;
    auto batch = in_->view_next(n);
    if (batch) produced_in_epoch_ = true;
    return batch;
  }
  void save(StateWriter& w) const override {
    w.tag("repeat");
    w.i64(epoch_);
    w.u64(produced_in_epoch_);
    w.u64(in_ != nullptr);
    if (in_) in_->save(w);
  }
  void restore(StateReader& r) override {
    r.expect_tag("repeat");
    epoch_ = r.i64();
    bool produced = r.u64() != 0;
    bool live = r.u64() != 0;
    if (epoch_ < 0 || (count_ >= 0 && epoch_ > count_))
      throw data_loss("iterator state: repeat epoch " + std::to_string(epoch_) + " out of range");
    in_.reset();
    if (live) {
      start_epoch();
      if (!in_) throw data_loss("iterator state: repeat epoch past its count");
      in_->restore(r);
    }
    produced_in_epoch_ = produced;  // after start_epoch(), which clears it
  }

 private:
  void start_epoch() {
    produced_in_epoch_ = false;
    if (count_ >= 0 && epoch_ >= count_) {
      in_.reset();
      return;
    }
    // Each epoch gets its own context so shuffles below reshuffle; nested repeats stay distinct.
    IteratorContext ctx{parent_.epoch * 0x9E3779B97F4A7C15ull + uint64_t(epoch_)};
    in_ = input_->make_iterator(ctx);
  }

  NodePtr input_;
  int64_t count_;
  IteratorContext parent_;
  int64_t epoch_ = 0;
  bool produced_in_epoch_ = false;
  std::unique_ptr<IteratorBase> in_;
};

std::unique_ptr<IteratorBase> RepeatNode::make_iterator(const IteratorContext& ctx) const {
  return std::make_unique<RepeatIterator>(input_, count_, ctx);
}

// ---- take / skip / shard: one position counter each ------------------------------------------

enum class CountKind { take, skip, shard };

class CountNode : public PassThroughNode {
 public:
  CountNode(NodePtr input, CountKind kind, int64_t n, int64_t index)
      : PassThroughNode(std::move(input)), kind_(kind), n_(n), index_(index) {}
  std::string name() const override {
    if (kind_ == CountKind::shard && n_ == kShardHint) return "shard_hint";  // HINT rewrites it
    return kind_ == CountKind::take ? "take" : kind_ == CountKind::skip ? "skip" : "shard";
  }
  ElementSpec element_spec() const override { return input_->element_spec(); }
  int64_t cardinality() const override;
  std::unique_ptr<IteratorBase> make_iterator(const IteratorContext& ctx) const override;
  CountKind kind() const { return kind_; }
  int64_t n() const { return n_; }
  int64_t index() const { return index_; }

 protected:
  NodePtr rebuild(NodePtr input) const override {
    return std::make_shared<CountNode>(std::move(input), kind_, n_, index_);
  }

 private:
  CountKind kind_;
  int64_t n_;
  int64_t index_;
};

int64_t CountNode::cardinality() const {
  int64_t c = input_->cardinality();
  switch (kind_) {
    case CountKind::take:
      if (n_ < 0) return c;
      return c == kInfiniteCardinality ? n_ : c < 0 ? kUnknownCardinality : std::min(c, n_);
    case CountKind::skip:
      if (c < 0) return c;
      return n_ < 0 ? 0 : std::max<int64_t>(0, c - n_);
    case CountKind::shard:
      if (c < 0 || n_ == kShardHint) return c < 0 ? c : kUnknownCardinality;
      return c / n_ + (index_ < c % n_ ? 1 : 0);
  }
  return kUnknownCardinality;
}

class CountIterator : public IteratorBase {
 public:
  CountIterator(std::unique_ptr<IteratorBase> in, std::string name, CountKind kind, int64_t n,
                int64_t index)
      : in_(std::move(in)), name_(std::move(name)), kind_(kind), n_(n), index_(index) {}
  std::optional<Element> next() override {
    switch (kind_) {
      case CountKind::take:
        if (n_ >= 0 && pos_ >= n_) return std::nullopt;
        ++pos_;
        return in_->next();
      case CountKind::skip:
        // skip(-1) skips everything, as in TF.
        while (n_ < 0 || pos_ < n_) {
          if (!in_->next()) return std::nullopt;
          ++pos_;
        }
        return in_->next();
      case CountKind::shard:
        if (n_ == kShardHint)
          throw failed_precondition(
              "shard(SHARD_HINT, SHARD_HINT) was never replaced; distribute the dataset with "
              "AutoShardPolicy HINT");
        while (auto e = in_->next())
          if (pos_++ % n_ == index_) return e;
        return std::nullopt;
    }
    return std::nullopt;
  }
  // take passes elements through untouched; skip and shard would fill rows they then drop.
  bool fills_rows() const override { return kind_ == CountKind::take && in_->fills_rows(); }
  bool fill_next(const RowDestination& dst) override {
    if (n_ >= 0 && pos_ >= n_) return false;
    ++pos_;
    return in_->fill_next(dst);
  }
  bool exhausted() const override {
    return kind_ == CountKind::take && ((n_ >= 0 && pos_ >= n_) || in_->exhausted());
  }
  std::optional<Element> view_next(int64_t n) override {
    if (kind_ != CountKind::take || (n_ >= 0 && pos_ + n > n_)) return std::nullopt;
    auto batch = in_->view_next(n);
    if (batch) pos_ += n;
    return batch;
  }
  void save(StateWriter& w) const override {
    w.tag(name_);
    w.i64(pos_);
    in_->save(w);
  }
  void restore(StateReader& r) override {
    r.expect_tag(name_);
    pos_ = r.i64();
    if (pos_ < 0) throw data_loss("iterator state: negative position in '" + name_ + "'");
    in_->restore(r);
  }

 private:
  std::unique_ptr<IteratorBase> in_;
  std::string name_;
  CountKind kind_;
  int64_t n_, index_;
  int64_t pos_ = 0;
};

std::unique_ptr<IteratorBase> CountNode::make_iterator(const IteratorContext& ctx) const {
  return std::make_unique<CountIterator>(input_->make_iterator(ctx), name(), kind_, n_, index_);
}

}  // namespace

Dataset Dataset::repeat(int64_t count) const {
  if (count < -1)
    throw invalid_argument("repeat: count must be >= -1, got " + std::to_string(count));
  return derive(std::make_shared<RepeatNode>(node_, count));
}

Dataset Dataset::take(int64_t n) const {
  return derive(std::make_shared<CountNode>(node_, CountKind::take, n, 0));
}

Dataset Dataset::skip(int64_t n) const {
  return derive(std::make_shared<CountNode>(node_, CountKind::skip, n, 0));
}

Dataset Dataset::shard(int64_t num_shards, int64_t index) const {
  bool hint = num_shards == kShardHint && index == kShardHint;
  if (!hint && num_shards <= 0)
    throw invalid_argument("shard: num_shards must be > 0, got " + std::to_string(num_shards));
  if (!hint && (index < 0 || index >= num_shards))
    throw invalid_argument("shard: index " + std::to_string(index) + " outside [0, " +
                           std::to_string(num_shards) + ")");
  return derive(std::make_shared<CountNode>(node_, CountKind::shard, num_shards, index));
}

}  // namespace troupe::data
