#include "experiment/run/experiment_setup.hpp"

#include "coordinator/mirrored_strategy.hpp"
#include "coordinator/multi_worker_mirrored_strategy.hpp"

namespace troupe {
namespace {

CrossDeviceOpKind cross_device_kind(const std::string& kind) {
  if (kind.empty()) return CrossDeviceOpKind::reduction_to_one_device;
  return parse_cross_device_op(kind, "strategy.cross_device_ops.kind");
}

}  // namespace

StrategyOptions make_strategy_options(const proto::Experiment& e) {
  StrategyOptions options;
  options.flush_denormals = !e.train().keep_denormals();
  return options;
}

std::unique_ptr<Strategy> make_experiment_strategy(caf::actor_system& system,
                                                   const proto::Experiment& e,
                                                   std::shared_ptr<WorkerCollective> workers) {
  const auto& s = e.strategy();
  std::vector<std::string> devices(s.devices().begin(), s.devices().end());
  if (s.kind() == "multi_worker_mirrored") {
    MultiWorkerOptions options;
    const auto& c = s.communication();
    options.communication.implementation =
        parse_communication_implementation(c.implementation().empty() ? "auto" : c.implementation(),
                                           "strategy.communication.implementation");
    options.communication.bytes_per_pack = c.bytes_per_pack();
    options.communication.timeout = std::chrono::milliseconds(c.timeout_ms());
    options.communication.cross_memory =
        parse_cross_memory_policy(c.cross_memory().empty() ? "auto" : c.cross_memory(),
                                  "strategy.communication.cross_memory");
    options.timeouts = make_strategy_options(e);
    return std::make_unique<MultiWorkerMirroredStrategy>(system, std::move(workers), devices,
                                                         options);
  }
  if (workers && workers->num_workers() > 1)
    throw invalid_argument("strategy.kind: " + (s.kind().empty() ? "mirrored" : s.kind()) +
                           " runs in one process, but this process is worker " +
                           std::to_string(workers->worker_index()) + " of " +
                           std::to_string(workers->num_workers()) +
                           "; use kind multi_worker_mirrored to train across workers");
  if (s.kind() == "default") return std::make_unique<DefaultStrategy>();
  if (s.kind() == "one_device")
    return std::make_unique<OneDeviceStrategy>(system, devices.empty() ? "CPU:0" : devices[0],
                                               make_strategy_options(e));
  if (s.kind() != "mirrored" && !s.kind().empty())
    throw invalid_argument("strategy.kind: unknown strategy '" + s.kind() + "'");
  MirroredOptions options;
  options.timeouts = make_strategy_options(e);
  if (s.has_cross_device_ops() && !s.cross_device_ops().kind().empty()) {
    options.cross_device_ops = cross_device_kind(s.cross_device_ops().kind());
    options.all_reduce.num_packs = s.cross_device_ops().num_packs();
    options.all_reduce.bytes_per_pack = s.cross_device_ops().bytes_per_pack();
  }
  return std::make_unique<MirroredStrategy>(system, devices, options);
}

ModelConfig make_model_config(const proto::Experiment& e) {
  const auto& m = e.model();
  ModelConfig c;
  c.input_dim = e.data().input_dim() > 0 ? e.data().input_dim() : m.input_dim();
  c.hidden.assign(m.hidden().begin(), m.hidden().end());
  c.classes = m.classes() > 0 ? m.classes() : (e.data().classes() > 0 ? e.data().classes() : 2);
  c.units = m.units() > 0 ? m.units() : 1;
  c.users = m.num_users();
  c.items = m.num_items();
  if (m.embedding_dim() > 0) c.dim = m.embedding_dim();
  c.seed = e.seed();
  return c;
}

OptimizerConfig make_optimizer_config(const proto::OptimizerSpec& o) {
  OptimizerConfig c;
  c.kind = parse_optimizer_kind(o.kind().empty() ? "sgd" : o.kind());
  if (o.learning_rate() > 0) c.learning_rate = o.learning_rate();
  // parse_experiment writes every hyper-parameter of the kind (its default when not given), so
  // a 0 here was asked for (momentum: 0, beta1: 0, initial_accumulator_value: 0) and is kept.
  if (c.kind == OptimizerKind::momentum) {
    c.momentum = o.momentum();
    c.nesterov = o.nesterov();
  } else if (c.kind == OptimizerKind::adam) {
    c.beta1 = o.beta1();
    c.beta2 = o.beta2();
    if (o.epsilon() > 0) c.epsilon = o.epsilon();
  } else if (c.kind == OptimizerKind::adagrad) {
    c.initial_accumulator = o.initial_accumulator_value();
    if (o.epsilon() > 0) c.epsilon = o.epsilon();
  }
  return c;
}

}  // namespace troupe
