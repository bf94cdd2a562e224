#pragma once
// Dataset: an immutable description of an input pipeline (a graph of DatasetNodes, sources at the
// roots), built fluently: Dataset::range(0, 8).shuffle(8, 1).batch(4). make_iterator() turns it
// into a pull-based Iterator whose position can be saved to bytes and restored, shuffle buffers
// and RNG positions included. Actors drive iterators; nothing here owns a thread.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/data/element.hpp"

namespace troupe::data {

class StateWriter;
class StateReader;
class DatasetNode;
using NodePtr = std::shared_ptr<const DatasetNode>;

/// How experimental_distribute_dataset splits data across workers (spec §2.7.7).
enum class AutoShardPolicy { off, auto_, file, data, hint };
/// "OFF", "AUTO", "FILE", "DATA", "HINT".
std::string_view auto_shard_policy_name(AutoShardPolicy p);

/// Placeholder for shard(kShardHint, kShardHint), replaced by the HINT policy.
constexpr int64_t kShardHint = -1;
/// batch_size_walk() result when the walk reached a source without passing a batch stage.
constexpr int64_t kNoBatchFound = -2;

/// Handed to iterators when they are created; repeat() bumps the epoch so shuffles reshuffle.
struct IteratorContext {
  uint64_t epoch = 0;
};

/// Where one element's components go inside preallocated batch tensors: one pointer per
/// component, each with room for exactly that component's bytes as the element spec gives them.
using RowDestination = std::vector<void*>;

/// One stage's running state. next() returns nullopt at end of sequence, and keeps doing so.
class IteratorBase {
 public:
  virtual ~IteratorBase() = default;
  virtual std::optional<Element> next() = 0;
  /// True when fill_next() can write elements straight into the rows of a batch: sources that
  /// compute an element from its index into given memory, and the stages that pass elements
  /// through unchanged above them. batch() then makes no tensor per element and copies nothing.
  virtual bool fills_rows() const { return false; }
  /// The next element written into `dst` (only called when fills_rows()); false at end of
  /// sequence. Exactly the bytes next() would have produced.
  virtual bool fill_next(const RowDestination& dst);
  /// The next n elements as one batch whose tensors view memory the source already holds (a
  /// materialised cache: no copy), when it can give exactly n such rows; otherwise nullopt with
  /// the position unchanged, and the caller fills the batch row by row instead. Only called
  /// when fills_rows(); stages that pass elements through unchanged forward it.
  virtual std::optional<Element> view_next(int64_t n);
  /// True when next() would certainly return nullopt, known without producing anything (a
  /// source at its cardinality); false when unknown. repeat() uses it to start the next epoch
  /// before asking it for views.
  virtual bool exhausted() const { return false; }
  /// Writes this stage's position (tag first) and then its inputs'.
  virtual void save(StateWriter& w) const = 0;
  /// Reads what save() wrote into a freshly made iterator of the same node.
  virtual void restore(StateReader& r) = 0;
};

/// One stage of a pipeline.
class DatasetNode {
 public:
  virtual ~DatasetNode() = default;
  /// Stage name ("range", "batch", "tfrecord", ...): used in state tags and errors.
  virtual std::string name() const = 0;
  virtual ElementSpec element_spec() const = 0;
  /// Number of elements, or kInfiniteCardinality / kUnknownCardinality.
  virtual int64_t cardinality() const = 0;
  virtual std::unique_ptr<IteratorBase> make_iterator(const IteratorContext& ctx) const = 0;

  /// Input stages (none for a source).
  virtual std::vector<NodePtr> inputs() const { return {}; }
  /// The same stage over replaced inputs; graph rewrites (auto-shard) use it.
  virtual NodePtr with_inputs(std::vector<NodePtr> inputs) const;
  /// The files a reader source reads; nullptr for sources that are not file-based.
  virtual const std::vector<std::string>* files() const { return nullptr; }
  /// The same reader over a different file list (FILE auto-sharding).
  virtual NodePtr with_files(std::vector<std::string> files) const;
  /// Batch size found by walking back to the nearest batch stage (ignoring partial batches);
  /// -1 when it cannot be known, kNoBatchFound when a source is reached first.
  virtual int64_t batch_size_walk() const { return -1; }
};

class Iterator;

/// A pipeline description; cheap to copy (shares its nodes).
class Dataset {
 public:
  using Generator = std::function<std::optional<Element>(int64_t index)>;
  using MapFn = std::function<Element(const Element&)>;
  using Predicate = std::function<bool(const Element&)>;

  explicit Dataset(NodePtr node, AutoShardPolicy policy = AutoShardPolicy::auto_);

  /// Slices each tensor along dimension 0 (all must share it): element i = (t0[i], t1[i], ...).
  static Dataset from_tensor_slices(std::vector<Tensor> tensors);
  /// int64 scalars start, start+step, ... up to (not including) stop; step may be negative.
  static Dataset range(int64_t start, int64_t stop, int64_t step = 1);
  /// Elements gen(0), gen(1), ... until it returns nullopt. Taking the index (rather than hidden
  /// state) is what lets a generator's position be saved and restored exactly.
  static Dataset from_generator(Generator gen, ElementSpec spec,
                                int64_t cardinality = kUnknownCardinality);

  /// Applies fn to every element; fn must keep the element spec.
  Dataset map(MapFn fn) const;
  /// Applies fn to every element, which produces elements of `output_spec`.
  Dataset map(MapFn fn, ElementSpec output_spec) const;
  /// Keeps elements for which pred is true.
  Dataset filter(Predicate pred) const;
  /// Stacks n consecutive elements; the short last batch is kept unless drop_remainder.
  Dataset batch(int64_t n, bool drop_remainder = false) const;
  /// Buffered shuffle (TF semantics), deterministic for a seed; reshuffles per repeat() epoch.
  Dataset shuffle(int64_t buffer_size, uint64_t seed, bool reshuffle_each_iteration = true) const;
  /// Repeats `count` times; -1 repeats forever.
  Dataset repeat(int64_t count = -1) const;
  Dataset take(int64_t n) const;
  Dataset skip(int64_t n) const;
  /// Keeps elements index, index + num_shards, ...
  Dataset shard(int64_t num_shards, int64_t index) const;
  /// Reads up to n elements ahead into a bounded buffer.
  Dataset prefetch(int64_t n) const;
  /// unbatch() + batch(n) with n cycling through batch_sizes; batches may span input batches
  /// (spec §2.7.6 _RebatchDataset).
  Dataset rebatch(std::vector<int64_t> batch_sizes, bool drop_remainder = false) const;
  /// Splits each input batch into num_replicas pieces of ceil(b / num_replicas) rows
  /// (_LegacyRebatchDataset); pieces never span input batches.
  Dataset legacy_rebatch(int64_t num_replicas) const;

  /// Same pipeline with a different auto-shard policy (TF: options.experimental_distribute).
  Dataset with_auto_shard_policy(AutoShardPolicy policy) const { return Dataset(node_, policy); }
  AutoShardPolicy auto_shard_policy() const { return policy_; }

  ElementSpec element_spec() const { return node_->element_spec(); }
  int64_t cardinality() const { return node_->cardinality(); }
  const NodePtr& node() const { return node_; }
  Iterator make_iterator() const;

 private:
  Dataset derive(NodePtr node) const { return Dataset(std::move(node), policy_); }
  NodePtr node_;
  AutoShardPolicy policy_;
};

/// A running pipeline. Not thread-safe: one owner (an actor) pulls from it.
class Iterator {
 public:
  explicit Iterator(NodePtr node);
  /// The next element, or nullopt at the end of the data.
  std::optional<Element> next();
  /// The iterator's whole position as checksummed bytes.
  std::string save() const;
  /// Continues from a saved position; throws data_loss on corrupt bytes (and then leaves this
  /// iterator unchanged).
  void restore(std::string_view bytes);
  ElementSpec element_spec() const { return node_->element_spec(); }

 private:
  NodePtr node_;
  std::unique_ptr<IteratorBase> impl_;
};

}  // namespace troupe::data
