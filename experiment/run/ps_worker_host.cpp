#include "experiment/run/ps_worker_host.hpp"

#include <caf/all.hpp>

#include "core/status.hpp"
#include "experiment/run/experiment_setup.hpp"
#include "experiment/run/ps_experiment_runner.hpp"
#include "train/registry.hpp"

namespace troupe {
namespace {

std::unique_ptr<ParameterServerStrategy> attached_strategy(
    caf::actor_system& system, const proto::Experiment& e, std::vector<caf::actor> shards,
    std::function<void(PsClient&)> prepare_client) {
  const auto& spec = e.strategy().parameter_server();
  if (int64_t(shards.size()) != spec.num_ps())
    throw invalid_argument("strategy.num_ps is " + std::to_string(spec.num_ps()) + ", but " +
                           std::to_string(shards.size()) + " ps shard(s) were connected");
  ParameterServerStrategyOptions options = make_ps_strategy_options(spec);
  options.attach = true;
  options.prepare_client = std::move(prepare_client);
  options.timeouts.flush_denormals = !e.train().keep_denormals();
  return std::make_unique<ParameterServerStrategy>(system, std::move(shards), options);
}

}  // namespace

PsWorkerHost::PsWorkerHost(caf::actor_system& system, const proto::Experiment& e, int worker,
                           std::vector<caf::actor> ps_shards,
                           std::function<void(PsClient&)> prepare_client)
    : system_(&system),
      strategy_(attached_strategy(system, e, std::move(ps_shards), std::move(prepare_client))),
      host_(std::make_shared<StepHost>(worker)) {
  const auto& spec = e.strategy().parameter_server();
  if (worker >= spec.workers())
    throw invalid_argument("worker " + std::to_string(worker) + " is not below strategy.workers " +
                           std::to_string(spec.workers()));
  if (e.data().global_batch() % spec.workers() != 0)
    throw invalid_argument("data.global_batch " + std::to_string(e.data().global_batch()) +
                           " does not split evenly over strategy.workers " +
                           std::to_string(spec.workers()));
  const ModelRegistry registry = ModelRegistry::with_builtins();
  std::shared_ptr<const Model> model =
      registry.create_model(e.model().kind(), make_model_config(e));
  trainer_ =
      std::make_unique<PsTrainer>(*strategy_, *host_, model, make_optimizer_config(e.optimizer()),
                                  make_ps_training_options(spec));
  // The coordinator's dataset 0, made here from this worker's shard of the data.
  host_->create_per_worker_dataset([e](int w) { return make_ps_worker_input(e, w); });
  actor_ = spawn_step_host(system, host_);
}

PsWorkerHost::~PsWorkerHost() {
  caf::scoped_actor self{*system_};
  self->monitor(actor_);
  self->send_exit(actor_, caf::exit_reason::user_shutdown);
  self->receive([](caf::down_msg&) {});
}

}  // namespace troupe
