#include "experiment/plan.hpp"

#include <algorithm>

#include "core/data/rebatch.hpp"
#include "core/device_spec.hpp"
#include "experiment/experiment_file.hpp"
#include "experiment/experiment_sections.hpp"
#include "experiment/ps_layout.hpp"

namespace troupe::experiment {
namespace {

PlannedVariable variable(std::string name, Shape shape) {
  PlannedVariable v;
  v.name = std::move(name);
  v.dtype = DType::float32;
  v.bytes = shape.num_elements() * int64_t(dtype_size(v.dtype));
  v.shape = std::move(shape);
  return v;
}

// The names the dense models create (train/dense_models.cpp): a single layer is "dense", the
// layers of a deeper stack "dense_0", "dense_1", ... (what checkpoints hold).
void add_dense(std::vector<PlannedVariable>& out, int index, bool single, int64_t in,
               int64_t units) {
  std::string layer = single ? "dense" : "dense_" + std::to_string(index);
  out.push_back(variable(layer + "/kernel", Shape{in, units}));
  out.push_back(variable(layer + "/bias", Shape{units}));
}

}  // namespace

std::vector<PlannedVariable> model_variables(const proto::ModelSpec& model) {
  std::vector<PlannedVariable> out;
  const std::string& kind = model.kind();
  if (kind == "linear") {
    add_dense(out, 0, true, model.input_dim(), model.units() > 0 ? model.units() : 1);
  } else if (kind == "softmax") {
    add_dense(out, 0, true, model.input_dim(), model.classes());
  } else if (kind == "mlp") {
    int64_t in = model.input_dim();
    int layer = 0;
    for (int64_t width : model.hidden()) {
      add_dense(out, layer++, model.hidden().empty(), in, width);
      in = width;
    }
    add_dense(out, layer, model.hidden().empty(), in, model.classes());
  } else if (kind == "embedding") {
    out.push_back(variable("embedding/users", Shape{model.num_users(), model.embedding_dim()}));
    out.push_back(variable("embedding/items", Shape{model.num_items(), model.embedding_dim()}));
  } else {
    throw invalid_argument("model.kind: unknown model kind \"" + kind + "\"");
  }
  return out;
}

ExperimentPlan make_plan(const proto::Experiment& experiment) {
  ExperimentPlan plan;
  plan.name = experiment.name();
  plan.strategy = experiment.strategy().kind();
  plan.cross_device_ops = experiment.strategy().cross_device_ops().kind();
  plan.global_batch = experiment.data().global_batch();
  plan.steps_per_execution = steps_per_execution(experiment.train());
  plan.on_nan = experiment.train().on_nan().empty() ? "stop" : experiment.train().on_nan();
  plan.flush_denormals = !experiment.train().keep_denormals();
  plan.distribute =
      experiment.data().distribute().empty() ? "dataset" : experiment.data().distribute();
  std::vector<std::string> devices(experiment.strategy().devices().begin(),
                                   experiment.strategy().devices().end());
  if (devices.empty()) devices.push_back("CPU:0");
  for (size_t i = 0; i < devices.size(); ++i)
    plan.replicas.push_back({int(i), canonicalize(devices[i])});
  // Every strategy this file can name runs in one process: one input worker feeds all replicas.
  PlannedInputWorker worker;
  worker.id = 0;
  worker.per_replica_batch_sizes =
      data::batch_sizes_for_worker(plan.global_batch, 1, int64_t(plan.replicas.size()), 0);
  for (int64_t b : worker.per_replica_batch_sizes) worker.batch_size += b;
  worker.prefetch = std::max<int64_t>(0, experiment.data().prefetch());
  plan.input_workers.push_back(worker);
  plan.variables = model_variables(experiment.model());
  if (plan.strategy == "parameter_server") {
    // The variables live once, on the ps tasks; the coordinator's CPU:0 holds no copy.
    plan.variables = plan_ps_variables(experiment, std::move(plan.variables));
    for (auto& v : plan.variables) {
      plan.parameters += v.shape.num_elements();
      plan.variable_bytes += v.bytes;
    }
    plan.memory = estimate_memory(experiment);
    plan.available_memory = available_memory_bytes();
    return plan;
  }
  for (auto& v : plan.variables) {
    for (const auto& replica : plan.replicas) {
      std::string name =
          replica.id == 0 ? v.name : v.name + "/replica_" + std::to_string(replica.id);
      v.components.push_back({name, replica.device});
    }
    plan.parameters += v.shape.num_elements();
    plan.variable_bytes += v.bytes;
  }
  plan.memory = estimate_memory(experiment);
  plan.available_memory = available_memory_bytes();
  return plan;
}

}  // namespace troupe::experiment
