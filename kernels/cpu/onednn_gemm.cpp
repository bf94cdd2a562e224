// float32 matmul through oneDNN's dnnl_sgemm (row-major, like cblas_sgemm with CblasRowMajor),
// kept on the calling thread. Without oneDNN in the build (TROUPE_HAVE_ONEDNN,
// kernels/CMakeLists.txt) the entry point refuses by name.

#include <string>

#include "kernels/cpu/cpu_kernels.hpp"

#if TROUPE_HAVE_ONEDNN
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#endif

namespace troupe::cpu {

#if TROUPE_HAVE_ONEDNN
namespace {

// Debian's libdnnl runs on OpenMP (libgomp; CMake checks dnnl_config.h) and sizes each parallel
// region by omp_get_max_threads() of the calling thread. libgomp keeps that value per thread (in
// the thread's implicit task), so setting it to 1 around the call keeps the GEMM on the replica's
// own thread, starts no OpenMP workers, and leaves every other thread's setting alone; restoring
// it afterwards leaves the caller as it was. OMP_NUM_THREADS or omp_set_num_threads on the main
// thread would instead change the default of every thread started later.
class OneOpenMpThread {
 public:
  OneOpenMpThread() : saved_(omp_get_max_threads()) {
    if (saved_ != 1) omp_set_num_threads(1);
  }
  ~OneOpenMpThread() {
    if (saved_ != 1) omp_set_num_threads(saved_);
  }
  OneOpenMpThread(const OneOpenMpThread&) = delete;
  OneOpenMpThread& operator=(const OneOpenMpThread&) = delete;

 private:
  int saved_;
};

const char* status_name(dnnl_status_t s) {
  switch (s) {
    case dnnl_out_of_memory: return "out of memory";
    case dnnl_invalid_arguments: return "invalid arguments";
    case dnnl_unimplemented: return "unimplemented";
    case dnnl_runtime_error: return "runtime error";
    default: return "error";
  }
}

}  // namespace

void onednn_sgemm(const MatmulArgs& x, int64_t lda, int64_t ldb, int64_t ldc) {
  OneOpenMpThread one_thread;
  dnnl_status_t s =
      dnnl_sgemm(x.transpose_a ? 'T' : 'N', x.transpose_b ? 'T' : 'N', x.m, x.n, x.k,
                 float(x.alpha), static_cast<const float*>(x.a), lda,
                 static_cast<const float*>(x.b), ldb, float(x.beta), static_cast<float*>(x.c), ldc);
  if (s != dnnl_success)
    throw internal_error("matmul: dnnl_sgemm failed (" + std::string(status_name(s)) +
                         ") for m=" + std::to_string(x.m) + " n=" + std::to_string(x.n) +
                         " k=" + std::to_string(x.k));
}

std::string onednn_isa_name() {
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "isa " + std::to_string(int(dnnl_get_effective_cpu_isa()));
  }
}

#else

void onednn_sgemm(const MatmulArgs&, int64_t, int64_t, int64_t) {
  throw unavailable(
      "matmul: this troupe was built without oneDNN (Debian's libdnnl-dev); float32 GEMM "
      "'onednn' is unavailable, available: openblas");
}

std::string onednn_isa_name() { return "none"; }

#endif

}  // namespace troupe::cpu
