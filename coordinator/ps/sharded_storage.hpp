#pragma once
// A ShardedVariable as a distributed variable's storage, so a variable that the strategy's
// partitioner splits is used like any other: reads concatenate the parts, writes split by rows,
// and an optimizer step goes to every part's shard at once (with the slots' parts beside them).

#include <memory>
#include <string>
#include <vector>

#include "coordinator/ps/sharded_variable.hpp"
#include "coordinator/variable_storage.hpp"

namespace troupe {

/// One copy, spread over the shards of its parts.
class ShardedStorage final : public VariableStorage {
 public:
  explicit ShardedStorage(ShardedVariable variable) : variable_(std::move(variable)) {}

  const std::string& name() const override { return variable_.name(); }
  DType dtype() const override { return variable_.dtype(); }
  const Shape& shape() const override { return variable_.shape(); }
  size_t copies() const override { return 1; }
  /// One device: the ps task of part 0 (a variable reports one device); parts() has them all.
  std::vector<std::string> devices() const override;

  Tensor read(size_t copy) const override;
  void write(size_t copy, VariableWrite kind, const std::vector<Tensor>& args) override;
  /// `slots` must be ShardedStorages colocated with this one (failed_precondition otherwise).
  void apply_update(size_t copy, const UpdateRule& rule, const std::vector<VariableStorage*>& slots,
                    const Tensor& indices, const Tensor& grad) override;
  /// Throws failed_precondition: the value has no copy in this process.
  std::vector<Variable>& local_copies() override;

  const ShardedVariable& sharded() const { return variable_; }

 private:
  void check_copy(size_t copy, const char* op) const;

  ShardedVariable variable_;
};

}  // namespace troupe
