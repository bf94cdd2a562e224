#include "kernels/cpu_gemm.hpp"

#include "kernels/cpu/cpu_kernels.hpp"

namespace troupe {

const char* cpu_gemm_name(CpuGemm gemm) { return gemm == CpuGemm::onednn ? "onednn" : "openblas"; }

std::vector<CpuGemm> available_cpu_gemms() {
#if TROUPE_HAVE_ONEDNN
  return {CpuGemm::openblas, CpuGemm::onednn};
#else
  return {CpuGemm::openblas};
#endif
}

// oneDNN's AVX-512 sgemm ran the model's GEMMs faster than OpenBLAS 0.3.21 in `troupe bench
// train` on the machines measured (docs/kernels.md).
CpuGemm default_cpu_gemm() {
#if TROUPE_HAVE_ONEDNN
  return CpuGemm::onednn;
#else
  return CpuGemm::openblas;
#endif
}

std::string onednn_cpu_isa() { return cpu::onednn_isa_name(); }

}  // namespace troupe
