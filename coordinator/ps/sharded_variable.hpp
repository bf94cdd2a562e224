#pragma once
// A variable split by rows over parameter-server shards (spec variables.md R-SV, R-SLICE, R-EMB,
// R-PS-SPLIT): part i, `<name>/part_<i>`, holds rows [offset_i, offset_{i+1}) and lives on the ps
// task its placement chose. Dense reads concatenate the parts; whole-variable writes split the
// value by rows; indexing and embedding lookups ask only the shards that own the rows, all at
// once, and only the requested rows travel.

#include <memory>
#include <string>
#include <vector>

#include <caf/actor.hpp>

#include "coordinator/ps/ps_client.hpp"
#include "core/ps/embedding_partition.hpp"
#include "core/ps/placement.hpp"
#include "core/ps/reshard.hpp"
#include "core/ps/shard_layout.hpp"
#include "core/ps/shard_write.hpp"
#include "core/ps/sharded_index.hpp"
#include "kernels/update_rule.hpp"

namespace troupe {

/// A variable whose rows are spread over ps shards.
class ShardedVariable {
 public:
  /// Splits `initial` into `num_shards` parts (R-PS-SPLIT) and creates each on
  /// `ps_tasks[placement.place(part)]`, in part order (each part advances the placement).
  /// `create_parts` false: the parts already exist there (made by the coordinator with the same
  /// placement; a worker process attaches to them) and nothing is sent.
  static ShardedVariable create(std::shared_ptr<const PsClient> client,
                                const std::vector<caf::actor>& ps_tasks, PlacementPolicy& placement,
                                const std::string& name, const Tensor& initial, int64_t num_shards,
                                bool create_parts = true);

  /// A variable of the same layout as `with` (same row split), each part created on the shard of
  /// `with`'s part: an optimizer slot colocated with its variable, part by part. `initial` must
  /// have `with`'s shape (invalid_argument naming both otherwise).
  static ShardedVariable create_colocated(std::shared_ptr<const PsClient> client,
                                          const ShardedVariable& with, const std::string& name,
                                          const Tensor& initial, bool create_parts = true);

  /// Restores parts saved by save() — of any part count — into `num_shards` new parts placed
  /// by `placement` (R-SVSAVE; E6: optimizer slots are re-sharded with the values). Each row's
  /// value and slots come from the saved part that held it; a new part deduplicates the step ids
  /// any of its source parts had applied (checkpoints are taken between steps). Throws
  /// invalid_argument when the parts disagree on variable, shape, dtype or slot rule, data_loss
  /// when they do not tile the rows.
  static ShardedVariable restore(std::shared_ptr<const PsClient> client,
                                 const std::vector<caf::actor>& ps_tasks,
                                 PlacementPolicy& placement,
                                 const std::vector<ps_saved_variable>& saved, int64_t num_shards);

  const std::string& name() const { return layout_.name(); }
  const Shape& shape() const { return layout_.full_shape(); }
  DType dtype() const { return layout_.dtype(); }
  const ShardLayout& layout() const { return layout_; }
  /// The ps task of each part, in part order.
  const std::vector<int64_t>& tasks() const { return tasks_; }

  /// Every part's value, slots and applied step ids, asked of all shards at once (part order).
  std::vector<ps_saved_variable> save() const;

  /// The whole value: the parts, read at once, concatenated along axis 0.
  Tensor read() const;
  /// sv[index]: one row (negative counts from the end); only its shard is asked.
  Tensor row(int64_t index) const;
  /// sv[start:stop:step] along axis 0 ([0] + shape[1:] when empty).
  Tensor slice(const SliceSpec& slice) const;

  /// value = x (x of the full shape), each part receiving its rows; likewise add and sub.
  void assign(const Tensor& x) { write_whole(ShardWrite::assign, x); }
  void assign_add(const Tensor& x) { write_whole(ShardWrite::assign_add, x); }
  void assign_sub(const Tensor& x) { write_whole(ShardWrite::assign_sub, x); }
  /// Row updates by global row index (rank-1 int32/int64), routed to the owning parts.
  void scatter_update(const Tensor& indices, const Tensor& rows) {
    scatter(ShardWrite::scatter_update, indices, rows);
  }
  void scatter_add(const Tensor& indices, const Tensor& rows) {
    scatter(ShardWrite::scatter_add, indices, rows);
  }
  void scatter_sub(const Tensor& indices, const Tensor& rows) {
    scatter(ShardWrite::scatter_sub, indices, rows);
  }

  /// One optimizer step on the parts, run on their shards at once: a dense `grad` of the full
  /// shape (`indices` undefined) is split by rows; gradient rows for global `indices` go to the
  /// parts owning them (per-row slots). `step_id` deduplicates retries (0 = none).
  /// `slots`: the optimizer's slot variables, each made by create_colocated(*this) (their part i
  /// is on part i's shard and is named in part i's step); empty: slots kept beside each part.
  /// `step_id` 0 takes the calling thread's ScopedStepId.
  void apply_gradients(const UpdateRule& rule, const Tensor& indices, const Tensor& grad,
                       uint64_t step_id = 0, const std::vector<const ShardedVariable*>& slots = {});

  /// Rows `ids` (any shape, int32/int64): shape ids.shape + shape[1:]. "div" (the default, as
  /// TF2) treats ids as global row numbers; "mod" sends id to part id % P, row id / P.
  Tensor embedding_lookup(const Tensor& ids,
                          PartitionStrategy strategy = PartitionStrategy::div) const;

 private:
  ShardedVariable(std::shared_ptr<const PsClient> client, ShardLayout layout,
                  std::vector<caf::actor> parts, std::vector<int64_t> tasks);
  /// Gathers (shard, row) pairs — at most one request per shard — into rows of `out_shape`.
  Tensor gather_rows(const std::vector<ShardRow>& at, Shape out_shape) const;
  void write_whole(ShardWrite kind, const Tensor& x);
  /// Rows addressed by global indices, grouped per part with local indices.
  struct PartRows {
    size_t part;
    Tensor indices;
    Tensor rows;
  };
  std::vector<PartRows> route_rows(const char* op, const Tensor& indices, const Tensor& rows) const;
  void scatter(ShardWrite kind, const Tensor& indices, const Tensor& rows);

  std::shared_ptr<const PsClient> client_;
  ShardLayout layout_;
  std::vector<caf::actor> parts_;
  std::vector<int64_t> tasks_;
};

}  // namespace troupe
