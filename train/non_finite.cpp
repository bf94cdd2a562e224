#include "train/non_finite.hpp"

#include "coordinator/device_inventory.hpp"
#include "core/finite_scan.hpp"

namespace troupe {

OnNonFinite parse_on_non_finite(const std::string& text) {
  if (text == "stop") return OnNonFinite::stop;
  if (text == "skip_step") return OnNonFinite::skip_step;
  if (text == "ignore") return OnNonFinite::ignore;
  throw invalid_argument("unknown on_nan policy '" + text + "' (stop, skip_step, ignore)");
}

const char* on_non_finite_name(OnNonFinite policy) {
  switch (policy) {
    case OnNonFinite::stop: return "stop";
    case OnNonFinite::skip_step: return "skip_step";
    case OnNonFinite::ignore: return "ignore";
  }
  return "?";
}

namespace {
// Whether `t` needs a scan at all: empty tensors, integer tensors and buffers the in-process
// all-reduce already found all finite as it wrote them answer without one. ("Not all finite"
// says nothing about a view of part of the buffer, so that case scans the view like an unknown
// one.)
bool needs_scan(const Tensor& t) {
  if (!t.defined() || t.num_elements() == 0) return false;
  if (t.dtype() != DType::float32 && t.dtype() != DType::float64) return false;
  return t.buffer()->finiteness() != Finiteness::all_finite;
}
}  // namespace

bool all_finite(const Tensor& t) { return all_finite(std::vector<Tensor>{t}); }

bool all_finite(const std::vector<Tensor>& tensors) {
  // Host tensors are scanned here; GPU tensors on their GPU, all in one go (one flag back per
  // GPU instead of every value, every step).
  std::vector<Tensor> on_gpu;
  for (const auto& t : tensors) {
    if (!needs_scan(t)) continue;
    if (t.memory() == MemoryKind::gpu) {
      on_gpu.push_back(t);
    } else if (!host_values_finite(t.raw_data(), t.dtype(), t.num_elements())) {
      return false;
    }
  }
  return on_gpu.empty() || gpu_values_finite(on_gpu);
}

bool all_finite(const std::vector<Gradient>& grads) {
  std::vector<Tensor> values;
  values.reserve(grads.size());
  for (const auto& g : grads) values.push_back(g.values);
  return all_finite(values);
}

}  // namespace troupe
