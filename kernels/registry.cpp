#include "kernels/registry.hpp"

#include <algorithm>

namespace troupe {

namespace {
std::string describe_key(std::string_view op, KernelDevice device, DType dtype) {
  return "op '" + std::string(op) + "' on device " + std::string(kernel_device_name(device)) +
         " for dtype " + std::string(dtype_name(dtype));
}
}  // namespace

std::string_view kernel_device_name(KernelDevice device) {
  return device == KernelDevice::gpu ? "gpu" : "cpu";
}

KernelDevice kernel_device_for(MemoryKind kind) {
  return kind == MemoryKind::gpu ? KernelDevice::gpu : KernelDevice::cpu;
}

void KernelRegistry::add_erased(std::string_view op, KernelDevice device, DType dtype,
                                const std::type_info& args_type, void (*fn)()) {
  if (fn == nullptr) throw invalid_argument("null kernel for " + describe_key(op, device, dtype));
  if (entries_.find(KeyView{op, device, dtype}) != entries_.end())
    throw Error(Code::already_exists,
                "a kernel is already registered for " + describe_key(op, device, dtype));
  entries_.emplace(Key{std::string(op), device, dtype}, Entry{std::type_index(args_type), fn});
}

void (*KernelRegistry::find_erased(std::string_view op, KernelDevice device, DType dtype,
                                   const std::type_info& args_type) const)() {
  auto it = entries_.find(KeyView{op, device, dtype});
  if (it == entries_.end())
    throw not_found("no kernel registered for " + describe_key(op, device, dtype));
  if (it->second.args_type != std::type_index(args_type))
    throw internal_error("kernel for " + describe_key(op, device, dtype) + " takes " +
                         it->second.args_type.name() + ", looked up with " + args_type.name());
  return it->second.fn;
}

bool KernelRegistry::contains(std::string_view op, KernelDevice device, DType dtype) const {
  return entries_.find(KeyView{op, device, dtype}) != entries_.end();
}

std::vector<std::string> KernelRegistry::keys() const {
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const auto& [key, entry] : entries_)
    out.push_back(key.op + "/" + std::string(kernel_device_name(key.device)) + "/" +
                  std::string(dtype_name(key.dtype)));
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace troupe
