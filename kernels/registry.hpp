#pragma once
// The kernel registry: every compute kernel is found by (op name, device kind, dtype). Callers
// dispatch on dtype exactly once, here, and the kernels below see only `void*` + dtype + count
// packed in an args struct (kernels/kernel_args.hpp). A registry is an ordinary object: build one
// with make_cpu_registry(), add GPU kernels with register_cuda_kernels() (troupe_cuda), and pass
// it to whoever runs kernels. There is no process-wide instance.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <typeindex>
#include <typeinfo>
#include <vector>

#include "core/buffer.hpp"
#include "core/dtype.hpp"
#include "core/status.hpp"
#include "kernels/cpu_gemm.hpp"

namespace troupe {

/// The kind of device a kernel runs on.
enum class KernelDevice : uint8_t { cpu = 0, gpu = 1 };

/// "cpu" or "gpu".
std::string_view kernel_device_name(KernelDevice device);
/// The device whose kernels can read memory of `kind` (host -> cpu, gpu -> gpu).
KernelDevice kernel_device_for(MemoryKind kind);

/// A kernel: a plain function over one args struct.
template <class Args>
using KernelFn = void (*)(const Args&);

/// Kernels keyed by (op, device, dtype); each entry remembers its args type so a lookup with the
/// wrong args struct is an error instead of undefined behaviour.
class KernelRegistry {
 public:
  KernelRegistry() = default;

  /// Registers `fn` for (op, device, dtype); throws already_exists when the key is taken.
  template <class Args>
  void add(std::string_view op, KernelDevice device, DType dtype, KernelFn<Args> fn) {
    add_erased(op, device, dtype, typeid(Args), reinterpret_cast<void (*)()>(fn));
  }

  /// The kernel for (op, device, dtype); throws not_found naming all three when missing.
  template <class Args>
  KernelFn<Args> find(std::string_view op, KernelDevice device, DType dtype) const {
    return reinterpret_cast<KernelFn<Args>>(find_erased(op, device, dtype, typeid(Args)));
  }

  /// True when a kernel is registered for (op, device, dtype).
  bool contains(std::string_view op, KernelDevice device, DType dtype) const;
  /// Number of registered kernels.
  size_t size() const { return entries_.size(); }
  /// "op/device/dtype" for every entry, sorted (for docs and diagnostics).
  std::vector<std::string> keys() const;

  /// The library behind the CPU float32 matmul kernel, when one is registered (code that runs a
  /// GEMM outside the registry, such as the all-reduce's outer products, must use the same one
  /// to reproduce its bits).
  std::optional<CpuGemm> cpu_float32_gemm() const { return cpu_float32_gemm_; }
  void set_cpu_float32_gemm(CpuGemm gemm) { cpu_float32_gemm_ = gemm; }

 private:
  struct Key {
    std::string op;
    KernelDevice device;
    DType dtype;
  };
  struct KeyView {
    std::string_view op;
    KernelDevice device;
    DType dtype;
  };
  // Transparent ordering so lookups by string_view allocate nothing.
  struct KeyLess {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      if (a.device != b.device) return a.device < b.device;
      if (a.dtype != b.dtype) return a.dtype < b.dtype;
      return std::string_view(a.op) < std::string_view(b.op);
    }
  };
  struct Entry {
    std::type_index args_type;
    void (*fn)();
  };

  void add_erased(std::string_view op, KernelDevice device, DType dtype,
                  const std::type_info& args_type, void (*fn)());
  void (*find_erased(std::string_view op, KernelDevice device, DType dtype,
                     const std::type_info& args_type) const)();

  std::map<Key, Entry, KeyLess> entries_;
  std::optional<CpuGemm> cpu_float32_gemm_;
};

/// A registry holding every CPU kernel. Also pins OpenBLAS to one thread: each replica runs on
/// its own core and calls GEMM itself, so BLAS threads would only oversubscribe the machine.
/// float32 matmul runs on default_cpu_gemm() (kernels/cpu_gemm.hpp).
KernelRegistry make_cpu_registry();

/// The same with float32 matmul on `gemm`; throws unavailable when this build lacks it.
KernelRegistry make_cpu_registry(CpuGemm gemm);

}  // namespace troupe
