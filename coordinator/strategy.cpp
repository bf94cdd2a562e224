#include "coordinator/strategy.hpp"

#include "coordinator/context.hpp"
#include "coordinator/device_inventory.hpp"
#include "coordinator/replica_group.hpp"
#include "coordinator/tensor_reductions.hpp"
#include "core/packing.hpp"

namespace troupe {
namespace {

/// merge_call for a single replica run inline: the merge runs at once, on the caller's thread.
class InlinePort final : public MergePort {
 public:
  explicit InlinePort(uint64_t step) : step_(step) {}
  std::vector<Tensor> merge(const std::string&, std::vector<Tensor> args,
                            MergeRunner runner) override {
    ++calls_;
    std::vector<std::vector<Tensor>> by_replica{std::move(args)};
    return std::move(runner(std::move(by_replica)).at(0));
  }
  // A group of one: every collective is the identity.
  Tensor collective(const CollectiveCall&, const Tensor& input) override { return input; }
  using MergePort::shared_memory_all_reduce;  // products: formed, then the identity
  Tensor shared_memory_all_reduce(const std::vector<Tensor>& inputs, bool) override {
    return concat_flat(inputs);
  }
  uint32_t merge_calls() const override { return calls_; }
  uint64_t step() const override { return step_; }

 private:
  uint64_t step_;
  uint32_t calls_ = 0;
};

/// Puts the calling (replica) thread into replica context for one step.
class ReplicaThreadGuard {
 public:
  ReplicaThreadGuard(Strategy& strategy, ReplicaContext& context) : saved_(this_thread_context()) {
    auto& c = this_thread_context();
    c.strategy = &strategy;
    c.replica = &context;
    c.update_replica_id = -1;
  }
  ~ReplicaThreadGuard() { this_thread_context() = saved_; }

 private:
  ThreadContext saved_;
};

}  // namespace

// ---- Scope -------------------------------------------------------------------------------------

Strategy::Scope::Scope(Strategy& strategy) {
  auto& c = this_thread_context();
  if (c.strategy == &strategy) {
    if (c.replica)
      throw failed_precondition(strategy.name() +
                                ".scope() entered inside a replica function; the scope is "
                                "already active there");
    ++c.scope_depth;
    reentered_ = true;
    return;
  }
  if (c.strategy)
    throw failed_precondition("cannot enter " + strategy.name() + ".scope() inside the scope of " +
                              "another strategy (" + c.strategy->name() + ")");
  c.strategy = &strategy;
  c.scope_depth = 0;
}

Strategy::Scope::~Scope() {
  auto& c = this_thread_context();
  if (reentered_) {
    --c.scope_depth;
    return;
  }
  c.strategy = nullptr;
}

// ---- Strategy ----------------------------------------------------------------------------------

Strategy::Strategy(std::string name, caf::actor_system* system, std::vector<std::string> devices,
                   std::unique_ptr<CrossDeviceOps> cross_device_ops,
                   std::shared_ptr<const KernelRegistry> kernels, StrategyOptions options)
    : name_(std::move(name)),
      kernels_(std::move(kernels)),
      extended_(*this, std::move(devices), std::move(cross_device_ops)) {
  const int n = num_local_replicas();
  if (system)
    group_ = std::make_unique<ReplicaGroup>(
        *system, n,
        ReplicaGroupOptions{options.merge_timeout, options.step_timeout, options.flush_denormals});
  else if (n != 1)
    throw invalid_argument(name_ + ": " + std::to_string(n) + " devices need an actor system");
}

// Joins the replica threads first: a replica still in a timed-out step runs a task that uses
// this strategy's members (devices, kernels, variables), which must outlive it.
Strategy::~Strategy() { group_.reset(); }

void Strategy::check_usable(const char* call) const {
  if (group_ && !group_->unusable_reason().empty())
    throw failed_precondition(name_ + "." + call + ": " + group_->unusable_reason());
}

void Strategy::wait_for_replicas() {
  if (group_) group_->wait_idle();
}

std::vector<std::vector<Tensor>> Strategy::run_tasks(const StepFn& fn,
                                                     const std::vector<ValueArg>& args) {
  if (get_replica_context())
    throw failed_precondition(name_ + ".run() called inside a replica function");
  check_usable("run()");
  const size_t n = size_t(num_local_replicas());
  std::vector<std::vector<Tensor>> per_replica_args(n);
  for (size_t r = 0; r < n; ++r)
    for (auto& a : args) per_replica_args[r].push_back(a.for_replica(r, n));
  return dispatch_step(fn, std::move(per_replica_args));
}

std::vector<std::vector<Tensor>> Strategy::dispatch_step(
    const StepFn& fn, std::vector<std::vector<Tensor>> per_replica_args) {
  Strategy* self = this;
  ReplicaTask task = [self, fn](int replica, MergePort& port, const std::vector<Tensor>& a) {
    // On the replica's own thread, before its step: a GPU replica's kernels go to its GPU
    // (cudaSetDevice through the device inventory; nothing for CPU replicas).
    bind_device(self->extended_.worker_devices().at(size_t(replica)));
    ReplicaContext context(*self, replica, port);
    ReplicaThreadGuard guard(*self, context);
    return fn(context, a);
  };
  if (!group_) {
    InlinePort port(0);
    return {task(0, port, per_replica_args[0])};
  }
  return group_->run(std::move(task), std::move(per_replica_args));
}

Tensor Strategy::reduce_to_host(ReduceOp op, const DistributedValues& value) {
  return extended_.reduce_to(op, value, extended_.host_device()).primary();
}

std::vector<PerReplica> Strategy::run(const StepFn& fn, const std::vector<ValueArg>& args) {
  auto by_replica = run_tasks(fn, args);
  const size_t n = by_replica.size();
  const size_t outputs = by_replica[0].size();
  for (size_t r = 1; r < n; ++r)
    if (by_replica[r].size() != outputs)
      throw invalid_argument(name_ + ".run: replica 0 returned " + std::to_string(outputs) +
                             " value(s) but replica " + std::to_string(r) + " returned " +
                             std::to_string(by_replica[r].size()));
  std::vector<PerReplica> result;
  for (size_t o = 0; o < outputs; ++o) {
    std::vector<Tensor> parts;
    for (size_t r = 0; r < n; ++r) parts.push_back(std::move(by_replica[r][o]));
    result.emplace_back(std::move(parts), extended_.worker_devices());
  }
  return result;
}

PerReplica Strategy::run_one(
    const std::function<Tensor(ReplicaContext&, const std::vector<Tensor>&)>& fn,
    const std::vector<ValueArg>& args) {
  // `fn` by value: after a step timeout a replica may still run the task when this returns.
  auto outs = run([fn](ReplicaContext& c,
                       const std::vector<Tensor>& a) { return std::vector<Tensor>{fn(c, a)}; },
                  args);
  return outs.at(0);
}

Tensor Strategy::reduce(std::string_view op, const ValueArg& value, std::optional<int> axis) {
  return reduce(parse_reduce_op(op), value, axis);
}

Tensor Strategy::reduce(ReduceOp op, const ValueArg& value, std::optional<int> axis) {
  if (get_replica_context())
    throw failed_precondition(name_ + ".reduce() may not be called in replica context");
  check_usable("reduce()");
  const int n = num_replicas_in_sync();
  Ops ops(*kernels_);
  if (!value.is_distributed()) {
    // A plain tensor counts as the same value held by every replica (spec §2.4).
    Tensor t = value.tensor();
    if (axis) {
      auto parts = sum_over_axis(ops, t, *axis);
      return op == ReduceOp::sum ? scaled(ops, parts.numerator, double(n))
                                 : divided(ops, parts.numerator, parts.denominator);
    }
    return op == ReduceOp::sum ? scaled(ops, t, double(n)) : t;
  }
  const auto& dv = value.distributed();
  if (!axis) return reduce_to_host(op, dv);
  // With an axis: each replica reduces its own dimension `axis` first; MEAN then divides the
  // summed numerators by the summed denominators, a true mean over unequal batches.
  // The denominators are reduced like the numerators, so that across workers the mean counts
  // every worker's rows.
  std::vector<Tensor> numerators, denominators;
  for (auto& part : dv.values()) {
    auto s = sum_over_axis(ops, part, *axis);
    numerators.push_back(s.numerator);
    denominators.push_back(Tensor::from_scalar<int64_t>(s.denominator));
  }
  Tensor total = reduce_to_host(ReduceOp::sum, PerReplica(numerators, dv.devices()));
  if (op == ReduceOp::sum) return total;
  int64_t denominator = 0;
  if (num_workers() == 1) {
    for (auto& d : denominators) denominator += d.scalar<int64_t>();
  } else {
    denominator =
        reduce_to_host(ReduceOp::sum, PerReplica(denominators, dv.devices())).scalar<int64_t>();
  }
  return divided(ops, total, denominator);
}

std::vector<Tensor> Strategy::experimental_local_results(const ValueArg& value) const {
  if (!value.is_distributed()) return {value.tensor()};
  return value.distributed().values();
}

DistributedVariable Strategy::create_variable(const std::string& name, const Tensor& initial,
                                              VariableOptions options) {
  auto& c = this_thread_context();
  if (!c.replica) check_usable("create_variable()");
  if (c.strategy != this)
    throw failed_precondition("create_variable('" + name + "') must be called inside " + name_ +
                              ".scope() or one of its replica functions");
  std::lock_guard<std::mutex> lock(variables_mutex_);
  std::string base = name.empty() ? "Variable" : name;
  if (c.replica) {
    // Replicas create lazily and concurrently: the first creates, the others share it.
    for (auto& v : variables_)
      if (v.name() == base) return v;
    ++name_counts_[base];
  } else if (int count = name_counts_[base]++; count > 0) {
    base += "_" + std::to_string(count);  // uniquify as TensorFlow's name scopes do
  }
  variables_.emplace_back(*this, make_variable_storage(base, initial, options), options.sync,
                          options.aggregation);
  return variables_.back();
}

std::shared_ptr<VariableStorage> Strategy::make_variable_storage(const std::string& name,
                                                                 const Tensor& initial,
                                                                 const VariableOptions&) {
  const auto& devices = extended_.worker_devices();
  std::vector<Variable> copies;
  for (size_t i = 0; i < devices.size(); ++i) {
    // Replicas after the first start from the primary's value, so all copies start equal.
    std::string copy = i == 0 ? name : name + "/replica_" + std::to_string(i);
    copies.emplace_back(copy, devices[i], i == 0 ? initial : copies[0].read(), kernels_);
  }
  return std::make_shared<ReplicaLocalStorage>(std::move(copies));
}

void Strategy::set_workers(int workers, int index) {
  if (workers < 1 || index < 0 || index >= workers)
    throw invalid_argument(name_ + ": worker " + std::to_string(index) + " of " +
                           std::to_string(workers) + " workers");
  num_workers_ = workers;
  worker_index_ = index;
}

}  // namespace troupe
