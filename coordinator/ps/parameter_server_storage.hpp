#pragma once
// A distributed variable's storage on a parameter-server shard (docs/architecture.md, "Variable
// storage"): the one value lives in a ps_shard actor, in this process or another, and every
// read, write and optimizer step is a message to it — so the optimizer's step runs on the shard.

#include <memory>
#include <string>
#include <vector>

#include <caf/actor.hpp>

#include "coordinator/ps/ps_client.hpp"
#include "coordinator/variable_storage.hpp"

namespace troupe {

/// One variable (or one part of a sharded one) held by a ps_shard.
class ParameterServerStorage final : public VariableStorage {
 public:
  /// Creates `name` with `initial` on `shard` (ps task `task`) and returns its storage.
  static std::shared_ptr<ParameterServerStorage> create(std::shared_ptr<const PsClient> client,
                                                        caf::actor shard, int64_t task,
                                                        const std::string& name,
                                                        const Tensor& initial);
  /// The storage of a variable `shard` already holds (e.g. restored from a checkpoint).
  ParameterServerStorage(std::shared_ptr<const PsClient> client, caf::actor shard, int64_t task,
                         std::string name, DType dtype, Shape shape);

  const std::string& name() const override { return name_; }
  DType dtype() const override { return dtype_; }
  const Shape& shape() const override { return shape_; }
  /// One: the value lives once, on its shard.
  size_t copies() const override { return 1; }
  /// "/job:ps/replica:0/task:<k>/device:CPU:0".
  std::vector<std::string> devices() const override;

  Tensor read(size_t copy) const override;
  void write(size_t copy, VariableWrite kind, const std::vector<Tensor>& args) override;
  /// The step runs on the shard; `slots` must be storages of variables on the same shard (an
  /// optimizer's slot variables), else failed_precondition naming both shards.
  void apply_update(size_t copy, const UpdateRule& rule, const std::vector<VariableStorage*>& slots,
                    const Tensor& indices, const Tensor& grad) override;
  /// Throws failed_precondition: the value has no copy in this process.
  std::vector<Variable>& local_copies() override;

  /// Step id carried by the next writes and optimizer steps (0 = none): the shard applies an
  /// update with a step id it has seen for this variable only once. When 0, the step id of the
  /// calling thread's ScopedStepId (coordinator/ps/step_id_scope.hpp) is used.
  void set_step_id(uint64_t step_id) { step_id_ = step_id; }
  const caf::actor& shard() const { return shard_; }
  int64_t task() const { return task_; }

 private:
  void check_copy(size_t copy, const char* op) const;

  std::shared_ptr<const PsClient> client_;
  caf::actor shard_;
  int64_t task_;
  std::string name_;
  DType dtype_;
  Shape shape_;
  uint64_t step_id_ = 0;
};

}  // namespace troupe
