#include "coordinator/ps/step_host.hpp"

#include <caf/all.hpp>

#include "coordinator/ps/step_id_scope.hpp"
#include "core/status.hpp"
#include "messages/atoms.hpp"
#include "messages/error_channel.hpp"
#include "messages/ps_step_messages.hpp"

namespace troupe {

// Declared with ElementFn in cluster_coordinator.hpp: the coordinator's in-process workers and a
// worker process's step host both resume their datasets with it.
void skip_drawn_batches(const ElementFn& next, int64_t dataset, int worker, int64_t position) {
  for (int64_t k = 0; k < position; ++k) {
    try {
      next();
    } catch (const Error& e) {
      if (e.code() != Code::out_of_range) throw;
      throw out_of_range("per-worker dataset " + std::to_string(dataset) + " of worker " +
                         std::to_string(worker) + " ended after " + std::to_string(k) + " of the " +
                         std::to_string(position) + " batches its resumed run skips");
    }
  }
}

StepHost::StepHost(int worker) : worker_(worker) {
  if (worker < 0)
    throw invalid_argument("StepHost: the worker index must be >= 0, got " +
                           std::to_string(worker));
}

void StepHost::register_step(const std::string& name, RemoteStepFn fn) {
  if (name.empty() || !fn) throw invalid_argument("StepHost: a step needs a name and a function");
  std::lock_guard<std::mutex> lock(mutex_);
  if (!steps_.emplace(name, std::move(fn)).second)
    throw invalid_argument("StepHost: step '" + name + "' is already registered");
}

PerWorkerDataset StepHost::create_per_worker_dataset(PerWorkerDatasetFn fn) {
  if (!fn) throw invalid_argument("create_per_worker_dataset needs a dataset function");
  std::lock_guard<std::mutex> lock(mutex_);
  datasets_.push_back(std::move(fn));
  return PerWorkerDataset(int64_t(datasets_.size()) - 1);
}

std::vector<Tensor> StepHost::next(int worker, int64_t dataset) {
  auto it = iterators_.find(dataset);
  if (it == iterators_.end()) {
    PerWorkerDatasetFn make;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (dataset < 0 || dataset >= int64_t(datasets_.size()))
        throw invalid_argument("per-worker dataset " + std::to_string(dataset) +
                               " was not created on worker " + std::to_string(worker_));
      make = datasets_[size_t(dataset)];
    }
    ElementFn fresh = make(worker);
    // A resumed run: the batches the checkpointed run drew are drawn again and dropped, so the
    // next element is the one the checkpointed run would have drawn next.
    const int64_t position = drawn_[dataset];
    skip_drawn_batches(fresh, dataset, worker_, position);
    it = iterators_.emplace(dataset, std::move(fresh)).first;
  }
  auto element = it->second();
  ++drawn_[dataset];
  return element;
}

void StepHost::set_input_position(int64_t dataset, int64_t batches) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (dataset < 0 || dataset >= int64_t(datasets_.size()))
      throw invalid_argument("per-worker dataset " + std::to_string(dataset) +
                             " was not created on worker " + std::to_string(worker_));
  }
  if (batches < 0)
    throw invalid_argument("worker " + std::to_string(worker_) + ": input position " +
                           std::to_string(batches) + " of per-worker dataset " +
                           std::to_string(dataset) + " is negative");
  if (iterators_.count(dataset))
    throw failed_precondition("worker " + std::to_string(worker_) + ": per-worker dataset " +
                              std::to_string(dataset) +
                              " has been drawn from already; its input position is set before "
                              "the first step");
  drawn_[dataset] = batches;
}

std::vector<int64_t> StepHost::batches_drawn() const {
  std::vector<int64_t> out;
  for (auto& d : drawn_) {
    if (d.first >= int64_t(out.size())) out.resize(size_t(d.first) + 1, 0);
    out[size_t(d.first)] = d.second;
  }
  return out;
}

std::vector<Tensor> StepHost::run(const std::string& name, uint64_t step_id, int attempt,
                                  const std::vector<Tensor>& args, caf::actor service) {
  RemoteStepFn fn;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = steps_.find(name);
    if (it == steps_.end())
      throw invalid_argument("worker " + std::to_string(worker_) + " has no step named '" + name +
                             "'");
    fn = it->second;
  }
  ScopedStepId id(step_id);
  StepContext ctx(this, worker_, step_id, attempt, std::move(service));
  return fn(ctx, args);
}

namespace {

caf::behavior step_host_actor(caf::event_based_actor* self, std::shared_ptr<StepHost> host) {
  return {
      [host](ps_run_step_msg& msg) -> caf::result<ps_step_done_msg> {
        try {
          auto outputs =
              host->run(msg.step, msg.step_id, msg.attempt, msg.args, std::move(msg.service));
          return ps_step_done_msg{msg.step_id, int32_t(host->worker()), std::move(outputs),
                                  host->batches_drawn()};
        } catch (const std::exception& e) {
          return to_caf_error(status_of(e));
        }
      },
      [host](input_position_atom, int64_t dataset, int64_t batches) -> caf::result<bool> {
        try {
          host->set_input_position(dataset, batches);
          return true;
        } catch (const std::exception& e) {
          return to_caf_error(status_of(e));
        }
      },
      [self](stop_atom) { self->quit(); },
  };
}

}  // namespace

caf::actor spawn_step_host(caf::actor_system& system, std::shared_ptr<StepHost> host) {
  if (!host) throw invalid_argument("spawn_step_host needs a StepHost");
  return system.spawn<caf::detached>(step_host_actor, std::move(host));
}

}  // namespace troupe
