#pragma once
// tf.distribute.Strategy in C++ (spec strategy-and-input.md §1-2.6). A Strategy owns one replica
// thread per device (coordinator/replica_group) and a cross-device op; its extended() half holds
// the lower-level reduce_to / batch_reduce_to / update (StrategyExtended).
// Strategies differ through three hooks, not branches: where a variable's values live
// (make_variable_storage), how a step reaches the replicas (dispatch_step) and how a distributed
// value is reduced to one host tensor (reduce_to_host). MirroredStrategy uses the defaults; a
// multi-worker or parameter-server strategy overrides them.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "coordinator/cross_device_ops.hpp"
#include "coordinator/distributed_variable.hpp"
#include "coordinator/replica_context.hpp"
#include "coordinator/strategy_extended.hpp"
#include "coordinator/value_arg.hpp"
#include "coordinator/variable_options.hpp"

namespace caf {
class actor_system;
}

namespace troupe {

class ReplicaGroup;

/// A step function: this replica's context and arguments -> its outputs.
using StepFn = std::function<std::vector<Tensor>(ReplicaContext&, const std::vector<Tensor>&)>;

/// Timeouts and the floating-point mode of a strategy's replica group.
struct StrategyOptions {
  std::chrono::milliseconds merge_timeout{std::chrono::seconds(60)};
  std::chrono::milliseconds step_timeout{std::chrono::minutes(10)};
  /// Replica threads flush subnormal floats to zero (core/float_mode.hpp), as TensorFlow's CPU
  /// threads do: a training run whose gradients go subnormal otherwise slows down severalfold.
  bool flush_denormals = true;
};

/// Base of every strategy: scope, run, reduce, variables.
class Strategy {
 public:
  virtual ~Strategy();
  Strategy(const Strategy&) = delete;
  Strategy& operator=(const Strategy&) = delete;

  /// "MirroredStrategy", "OneDeviceStrategy", "DefaultStrategy".
  const std::string& name() const { return name_; }
  /// Replicas in sync across every worker (TF's num_replicas_in_sync): this process's replicas
  /// times the number of workers.
  int num_replicas_in_sync() const { return num_local_replicas() * num_workers(); }
  /// This process's replicas (one per local device); replica ids in a ReplicaContext, a
  /// PerReplica's components and a variable's copies are indexed by them.
  int num_local_replicas() const { return int(extended_.worker_devices().size()); }
  /// Workers (processes) in sync: 1 except for MultiWorkerMirroredStrategy across processes.
  int num_workers() const { return num_workers_; }
  /// This process's index among the workers (0 is the chief).
  int worker_index() const { return worker_index_; }
  StrategyExtended& extended() { return extended_; }
  const StrategyExtended& extended() const { return extended_; }
  std::shared_ptr<const KernelRegistry> kernels() const { return kernels_; }

  /// RAII scope: the calling thread is in this strategy's cross-replica context until the
  /// Scope is destroyed. Re-entrant; entering another strategy's scope inside is an error.
  class Scope {
   public:
    explicit Scope(Strategy& strategy);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    bool reentered_ = false;
  };
  Scope scope() { return Scope(*this); }

  /// Runs `fn` once per replica in replica context; replica r gets args[i].for_replica(r).
  /// Returns one PerReplica per output of fn. When a replica misses the step timeout, run
  /// throws deadline_exceeded while that replica may still be inside `fn` (a thread cannot be
  /// stopped from outside): whatever `fn` refers to must outlive the strategy (its destructor
  /// waits for that replica), or `fn` must own it (capture by value), or its owner must call
  /// wait_for_replicas() before freeing it. From then on run, reduce and create_variable throw
  /// failed_precondition naming the slow replica(s).
  std::vector<PerReplica> run(const StepFn& fn, const std::vector<ValueArg>& args = {});
  /// Blocks until no replica runs a step function (after a step timeout: until the slow
  /// replicas leave the abandoned step). For owners of what a step function refers to.
  void wait_for_replicas();
  /// Convenience for step functions returning one tensor.
  PerReplica run_one(const std::function<Tensor(ReplicaContext&, const std::vector<Tensor>&)>& fn,
                     const std::vector<ValueArg>& args = {});

  /// Reduces across replicas to one host tensor (spec §2.4): axis = nullopt reduces element-wise;
  /// with an axis, MEAN is the true global mean (sum of numerators / sum of denominators).
  Tensor reduce(ReduceOp op, const ValueArg& value, std::optional<int> axis = std::nullopt);
  Tensor reduce(std::string_view op, const ValueArg& value, std::optional<int> axis = std::nullopt);
  /// The components of `value` in replica order; a plain tensor gives one element.
  std::vector<Tensor> experimental_local_results(const ValueArg& value) const;

  /// Creates a distributed variable (one component per replica, named `name`,
  /// `name/replica_<i>`). Must be called inside scope() or a replica function; in a replica
  /// function every replica gets the same variable (creation is idempotent per name).
  DistributedVariable create_variable(const std::string& name, const Tensor& initial,
                                      VariableOptions options = {});

 protected:
  /// `system` may be null only for a single device: then steps run inline, without actors.
  Strategy(std::string name, caf::actor_system* system, std::vector<std::string> devices,
           std::unique_ptr<CrossDeviceOps> cross_device_ops,
           std::shared_ptr<const KernelRegistry> kernels, StrategyOptions options);

  /// Hook: the storage of a new variable `name` (already uniquified) starting at `initial`.
  /// Default: one Variable per replica in this process, all starting equal (ReplicaLocalStorage).
  virtual std::shared_ptr<VariableStorage> make_variable_storage(const std::string& name,
                                                                 const Tensor& initial,
                                                                 const VariableOptions& options);
  /// Hook: runs `fn` once per replica with `per_replica_args[r]` and returns every replica's
  /// outputs in replica order. Default: this process's replica group (inline for one device).
  virtual std::vector<std::vector<Tensor>> dispatch_step(
      const StepFn& fn, std::vector<std::vector<Tensor>> per_replica_args);
  /// Hook: `value` reduced element-wise by `op` to one tensor on the host device.
  /// Default: extended().reduce_to the host device through the cross-device op.
  virtual Tensor reduce_to_host(ReduceOp op, const DistributedValues& value);

  /// For a multi-worker strategy's constructor: this process is worker `index` of `workers`.
  void set_workers(int workers, int index);

 private:
  std::vector<std::vector<Tensor>> run_tasks(const StepFn& fn, const std::vector<ValueArg>& args);
  /// Throws failed_precondition naming the slow replica(s) once a step has timed out.
  void check_usable(const char* call) const;

  std::string name_;
  int num_workers_ = 1, worker_index_ = 0;
  std::shared_ptr<const KernelRegistry> kernels_;
  StrategyExtended extended_;
  std::unique_ptr<ReplicaGroup> group_;
  std::mutex variables_mutex_;
  std::vector<DistributedVariable> variables_;  // for idempotent creation in replica context
  std::map<std::string, int> name_counts_;
};

/// A CPU kernel registry plus the CUDA kernels when troupe_cuda is linked and a GPU exists.
std::shared_ptr<const KernelRegistry> default_kernels();

}  // namespace troupe
