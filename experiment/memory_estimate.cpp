#include "experiment/memory_estimate.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "experiment/experiment_file.hpp"
#include "experiment/experiment_sections.hpp"
#include "experiment/plan.hpp"

namespace troupe::experiment {
namespace {

int64_t slots_per_variable(const std::string& optimizer) {
  if (optimizer == "adam") return 2;
  if (optimizer == "momentum" || optimizer == "adagrad") return 1;
  return 0;
}

// The key whose value sizes the model's variables.
std::string model_key(const proto::ModelSpec& model) {
  if (model.kind() == "embedding")
    return model.num_items() >= model.num_users() ? "model.num_items" : "model.num_users";
  if (model.kind() == "mlp" && model.hidden_size() > 0) return "model.hidden";
  return "model.input_dim";
}

// Widths of the values one example carries through the model: the dense layers' inputs and
// outputs (each kept before and after its activation for the backward pass), or an embedding
// model's two looked-up rows.
int64_t activation_elements_per_example(const proto::ModelSpec& model) {
  if (model.kind() == "embedding") return 4 * model.embedding_dim();
  int64_t widths = model.input_dim();
  for (int64_t h : model.hidden()) widths += 2 * h;
  const int64_t out =
      model.kind() == "linear" ? std::max<int64_t>(1, model.units()) : model.classes();
  return widths + 2 * out;
}

// Saturating multiply: absurd sizes must compare as large, not wrap.
int64_t times(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a > INT64_MAX / b) return INT64_MAX / 4;
  return a * b;
}

int64_t global_batch_bytes(const proto::Experiment& e) {
  const int64_t width = e.model().kind() == "embedding" ? 2 : e.model().input_dim();
  const int64_t example_bytes = 4 * width + 8;  // float32 features (or ids) and a label
  return times(e.data().global_batch(), example_bytes);
}

}  // namespace

int64_t synthetic_cache_bytes(const proto::Experiment& e) {
  const auto& d = e.data();
  if (d.kind().rfind("synthetic_", 0) != 0 || d.shuffle()) return 0;
  const int64_t width = d.input_dim() > 0 ? d.input_dim() : e.model().input_dim();
  const int64_t label_bytes = d.kind() == "synthetic_classification"
                                  ? 8  // int64 label
                                  : 4 * std::max<int64_t>(1, e.model().units());
  const int64_t bytes = times(d.examples(), times(4, width) + label_bytes);
  return bytes <= kSyntheticCacheBudget ? bytes : 0;
}

int64_t default_prefetch(const proto::Experiment& e) {
  const int64_t chunks = 2 * steps_per_execution(e.train());
  const int64_t batch = std::max<int64_t>(1, global_batch_bytes(e));
  return std::max<int64_t>(1, std::min(chunks, kDefaultPrefetchBytes / batch));
}

MemoryEstimate estimate_memory(const proto::Experiment& e) {
  MemoryEstimate m;
  const int64_t replicas = std::max(1, replica_count(e.strategy()));
  int64_t variable_bytes = 0;
  for (const auto& v : model_variables(e.model())) variable_bytes += v.bytes;
  m.parameters = times(variable_bytes, replicas);
  m.slots = times(m.parameters, slots_per_variable(e.optimizer().kind()));
  m.gradients = times(m.parameters, 2);
  const int64_t global = e.data().global_batch();
  const int64_t per_replica = (global + replicas - 1) / replicas;
  m.activations =
      times(times(per_replica, activation_elements_per_example(e.model())), 4 * replicas);
  m.input = times(global_batch_bytes(e), 1 + std::max<int64_t>(0, e.data().prefetch())) +
            synthetic_cache_bytes(e);
  m.total = m.parameters + m.slots + m.gradients + m.activations + m.input;
  const int64_t model_part = m.parameters + m.slots + m.gradients;
  m.largest_key =
      model_part >= m.activations + m.input ? model_key(e.model()) : "data.global_batch";
  return m;
}

int64_t available_memory_bytes() {
  if (const char* env = std::getenv("TROUPE_MEMORY_BYTES")) {
    char* end = nullptr;
    long long v = std::strtoll(env, &end, 10);
    if (end != env && *end == '\0' && v > 0) return v;
  }
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  long long kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemTotal:") return int64_t(kib) * 1024;
  return 0;
}

std::string format_bytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char text[32];
  if (u == 0)
    std::snprintf(text, sizeof text, "%lld B", static_cast<long long>(bytes));
  else
    std::snprintf(text, sizeof text, "%.1f %s", v, units[u]);
  return text;
}

void check_memory(const proto::Experiment& e, const SourceMap& source, int64_t available) {
  if (available <= 0) return;
  const MemoryEstimate m = estimate_memory(e);
  if (m.total <= available) return;
  std::ostringstream why;
  why << "the run needs about " << format_bytes(m.total) << " (parameters "
      << format_bytes(m.parameters) << ", optimizer slots " << format_bytes(m.slots)
      << ", gradients " << format_bytes(m.gradients) << ", activations "
      << format_bytes(m.activations) << ", input " << format_bytes(m.input)
      << ") but this machine has " << format_bytes(available) << " of memory; make "
      << m.largest_key << " smaller";
  throw source.error(m.largest_key, why.str());
}

}  // namespace troupe::experiment
