// plan_to_json / plan_to_table: the two ways `troupe plan` prints an ExperimentPlan.
#include <cstdio>
#include <sstream>

#include "experiment/json_writer.hpp"
#include "experiment/plan.hpp"

namespace troupe::experiment {

std::string plan_to_json(const ExperimentPlan& plan) {
  JsonWriter json;
  json.begin_object();
  json.key("name").string(plan.name);
  json.key("strategy").string(plan.strategy);
  json.key("cross_device_ops").string(plan.cross_device_ops);
  json.key("global_batch").integer(plan.global_batch);
  json.key("steps_per_execution").integer(plan.steps_per_execution);
  json.key("distribute").string(plan.distribute);
  json.key("on_nan").string(plan.on_nan);
  json.key("flush_denormals").boolean(plan.flush_denormals);
  json.key("replicas").begin_array();
  for (const auto& r : plan.replicas) {
    json.begin_object().key("id").integer(r.id).key("device").string(r.device).end_object();
  }
  json.end_array();
  json.key("input_workers").begin_array();
  for (const auto& w : plan.input_workers) {
    json.begin_object().key("id").integer(w.id).key("per_replica_batch_sizes").begin_array();
    for (int64_t b : w.per_replica_batch_sizes) json.integer(b);
    json.end_array().key("batch_size").integer(w.batch_size);
    json.key("prefetch").integer(w.prefetch).end_object();
  }
  json.end_array();
  json.key("variables").begin_array();
  for (const auto& v : plan.variables) {
    json.begin_object().key("name").string(v.name);
    json.key("dtype").string(std::string(dtype_name(v.dtype)));
    json.key("shape").begin_array();
    for (int64_t d : v.shape.dims()) json.integer(d);
    json.end_array().key("bytes").integer(v.bytes).key("components").begin_array();
    for (const auto& c : v.components)
      json.begin_object().key("name").string(c.name).key("device").string(c.device).end_object();
    json.end_array();
    if (plan.strategy == "parameter_server") {
      json.key("colocated_with").string(v.colocated_with).key("parts").begin_array();
      for (const auto& p : v.parts) {
        json.begin_object().key("name").string(p.name).key("shape").begin_array();
        for (int64_t d : p.shape.dims()) json.integer(d);
        json.end_array().key("offset").begin_array();
        for (int64_t o : p.offset) json.integer(o);
        json.end_array().key("task").integer(p.task).key("device").string(p.device).end_object();
      }
      json.end_array();
    }
    json.end_object();
  }
  json.end_array();
  json.key("parameters").integer(plan.parameters);
  json.key("variable_bytes").integer(plan.variable_bytes);
  json.key("memory").begin_object();
  json.key("parameters").integer(plan.memory.parameters).key("slots").integer(plan.memory.slots);
  json.key("gradients").integer(plan.memory.gradients);
  json.key("activations").integer(plan.memory.activations);
  json.key("input").integer(plan.memory.input).key("total").integer(plan.memory.total);
  json.key("available").integer(plan.available_memory).end_object();
  json.end_object();
  return json.str();
}

std::string plan_to_table(const ExperimentPlan& plan) {
  std::ostringstream out;
  char line[512];
  out << "experiment " << plan.name << ": strategy " << plan.strategy;
  if (!plan.cross_device_ops.empty()) out << " (" << plan.cross_device_ops << ")";
  out << ", global batch " << plan.global_batch << ", " << plan.steps_per_execution
      << " step(s) per execution, on non-finite loss: " << plan.on_nan
      << (plan.flush_denormals ? ", subnormals flushed to zero" : ", subnormals kept")
      << "\n\nreplicas\n";
  for (const auto& r : plan.replicas) {
    std::snprintf(line, sizeof line, "  %-4d %s\n", r.id, r.device.c_str());
    out << line;
  }
  if (plan.strategy == "multi_worker_mirrored")
    out << "  (one worker's replicas, as `troupe run` runs them; under `troupe launch -n N` each "
           "of "
           "the N workers runs these, and the global batch is split over all of them)\n";
  out << "\ninput workers (" << plan.distribute
      << "; per-replica batch sizes, steps produced ahead)\n";
  for (const auto& w : plan.input_workers) {
    out << "  " << w.id << "    [";
    for (size_t i = 0; i < w.per_replica_batch_sizes.size(); ++i)
      out << (i ? ", " : "") << w.per_replica_batch_sizes[i];
    out << "] = " << w.batch_size << ", prefetch " << w.prefetch << "\n";
  }
  out << "\nvariables\n";
  std::snprintf(line, sizeof line, "  %-24s %-8s %-16s %12s  %s\n", "name", "dtype", "shape",
                "bytes", "copies");
  out << line;
  for (const auto& v : plan.variables) {
    std::snprintf(line, sizeof line, "  %-24s %-8s %-16s %12lld  %zu\n", v.name.c_str(),
                  std::string(dtype_name(v.dtype)).c_str(), v.shape.to_string().c_str(),
                  static_cast<long long>(v.bytes), v.components.size());
    out << line;
  }
  for (const auto& v : plan.variables)
    for (const auto& p : v.parts) {
      std::snprintf(line, sizeof line, "    %-30s %-16s ps task %lld\n", p.name.c_str(),
                    p.shape.to_string().c_str(), static_cast<long long>(p.task));
      out << line;
    }
  out << "\n"
      << plan.parameters << " parameters, " << plan.variable_bytes << " bytes per copy, "
      << plan.variable_bytes * int64_t(plan.replicas.size()) << " bytes over "
      << plan.replicas.size() << " replica(s)\n";
  const MemoryEstimate& m = plan.memory;
  out << "\nmemory (estimate): " << format_bytes(m.total) << " = parameters "
      << format_bytes(m.parameters) << " + optimizer slots " << format_bytes(m.slots)
      << " + gradients " << format_bytes(m.gradients) << " + activations "
      << format_bytes(m.activations) << " + input " << format_bytes(m.input) << "; available "
      << (plan.available_memory > 0 ? format_bytes(plan.available_memory) : "unknown") << "\n";
  return out.str();
}

}  // namespace troupe::experiment
