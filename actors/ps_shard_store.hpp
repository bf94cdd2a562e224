#pragma once
// What a ps_shard actor owns, without CAF: its variables (whole ones and row ranges of sharded
// ones), their optimizer slots, and the step ids applied to each (exactly-once under retries).
// The actor (actors/ps_shard.cpp) only translates messages to these calls; keeping the logic
// here keeps it testable and the CAF translation unit small.
//
// Every error names the shard and the variable ("ps shard 'ps:1', variable 'emb/part_1' (rows
// [3, 6) of 'emb'): ...").

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/ps/applied_steps.hpp"
#include "core/ps/shard_write.hpp"
#include "core/tensor.hpp"
#include "kernels/ops.hpp"
#include "kernels/update_rule.hpp"

namespace troupe {

/// Where a held value sits in its variable: a whole variable has full_name == name and a zero
/// offset; a shard `emb/part_1` holds rows [offset[0], offset[0] + rows) of `emb`.
struct PsVariableSpec {
  std::string name;
  std::string full_name;
  Shape full_shape;
  std::vector<int64_t> offset;
};

/// The outcome of an update: applied now, or a repeat of a step already applied.
struct PsUpdateResult {
  bool applied = false;
  uint64_t updates = 0;  ///< updates applied to the variable so far (repeats not counted)
};

/// One variable as saved: value, slots and the step ids applied to it.
struct PsSavedVariable {
  PsVariableSpec spec;
  Tensor value;
  std::string slot_rule;  ///< optimizer_kind_name of the slots' rule; "" when none
  std::vector<Tensor> slots;
  uint64_t updates = 0;
  uint64_t applied_floor = 0;
  std::vector<uint64_t> applied_sparse;
};

/// The variables of one parameter-server shard.
class PsShardStore {
 public:
  PsShardStore(std::string shard_name, std::shared_ptr<const KernelRegistry> kernels);

  const std::string& shard_name() const { return shard_name_; }
  /// Names of the variables held, sorted.
  std::vector<std::string> names() const;

  /// Adds a variable with (a private copy of) `initial`. Throws already_exists for a taken name
  /// and invalid_argument when `initial` does not fit the spec's place in its variable.
  void create(PsVariableSpec spec, const Tensor& initial);
  /// The current value (a later write does not change what was returned).
  Tensor read(const std::string& name) const;
  /// Rows `rows` (rank-1 int32/int64, local to this part) of the value: only those travel.
  Tensor gather(const std::string& name, const Tensor& rows) const;
  /// assign*/scatter* with `value` (and `indices` for scatters); a step id seen before for this
  /// variable is acknowledged without applying (0 = always apply).
  PsUpdateResult write(const std::string& name, ShardWrite kind, uint64_t step_id,
                       const Tensor& indices, const Tensor& value);
  /// One optimizer step with a dense gradient (`indices` undefined) or gradient rows. The slots
  /// are the held variables `slot_variables` (slot_names order, each of the variable's shape),
  /// or when none are named, slots kept beside the variable: created on first use (zeros,
  /// Adagrad's accumulator at initial_accumulator), keeping the same rule afterwards.
  /// Deduplicated by step id like write().
  PsUpdateResult apply(const std::string& name, uint64_t step_id, const UpdateRule& rule,
                       const Tensor& indices, const Tensor& grad,
                       const std::vector<std::string>& slot_variables = {});
  /// The slot `slot` (slot_names order) of a variable; throws not_found when it has none.
  Tensor slot(const std::string& name, size_t slot) const;

  /// Saves `names` (every variable when empty).
  std::vector<PsSavedVariable> save(const std::vector<std::string>& names) const;
  /// Replaces (or creates) each saved variable; a held variable must have the saved shape.
  void restore(const std::vector<PsSavedVariable>& saved);

 private:
  struct Held {
    PsVariableSpec spec;
    Tensor value;
    bool has_slots = false;
    OptimizerKind slot_rule = OptimizerKind::sgd;
    std::vector<Tensor> slots;
    AppliedSteps applied;
    uint64_t updates = 0;
  };

  Held& find(const std::string& name);
  const Held& find(const std::string& name) const;
  /// "ps shard 'ps:0', variable 'w'" (plus the row range of a shard part).
  std::string where(const Held& held) const;
  /// Runs `fn`, re-throwing any troupe::Error prefixed with where(held).
  template <class Fn>
  auto named(const Held& held, Fn&& fn) const -> decltype(fn());
  /// The value to update in place: a private copy first when a reader still holds it.
  Tensor& mutable_value(Held& held);
  void check_rows(const Held& held, const Tensor& rows, const char* op) const;
  void ensure_slots(Held& held, const UpdateRule& rule);
  /// The values of the held variables `names` used as `held`'s slots under `rule`.
  std::vector<Tensor*> named_slots(const Held& held, const UpdateRule& rule,
                                   const std::vector<std::string>& names);

  std::string shard_name_;
  std::shared_ptr<const KernelRegistry> kernels_;
  Ops ops_;
  std::map<std::string, Held> held_;
};

}  // namespace troupe
