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

bool all_finite(const Tensor& t) {
  if (!t.defined() || t.num_elements() == 0) return true;
  if (t.dtype() != DType::float32 && t.dtype() != DType::float64) return true;
  // The in-process all-reduce scanned its result as it wrote it: a buffer known to be all
  // finite answers for every view of it. "Not all finite" says nothing about a view of part of
  // the buffer, so that case scans the view like an unknown one.
  if (t.buffer()->finiteness() == Finiteness::all_finite) return true;
  const Tensor host = t.memory() == MemoryKind::host ? t : to_host(t);
  return host_values_finite(host.raw_data(), host.dtype(), host.num_elements());
}

bool all_finite(const std::vector<Tensor>& tensors) {
  for (const auto& t : tensors)
    if (!all_finite(t)) return false;
  return true;
}

bool all_finite(const std::vector<Gradient>& grads) {
  for (const auto& g : grads)
    if (!all_finite(g.values)) return false;
  return true;
}

}  // namespace troupe
