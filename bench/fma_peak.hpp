#pragma once
// The machine's float32 multiply-add peak: the ceiling under every GEMM library. `troupe bench
// train` reports it beside the libraries' rates, so that a goal asking for more examples/s than
// the cores can multiply and add is seen to be past the hardware, not past a library.

namespace troupe {

struct FmaPeak {
  double gflops = 0;     ///< 2 FLOPs per lane per fused multiply-add
  const char* isa = "";  ///< "avx512f", "avx2+fma" or "sse2" (multiply, then add)
};

/// GFLOP/s of one thread running a loop of independent multiply-adds held in registers (no
/// memory traffic), with the widest vectors this CPU runs (found at run time), best of `reps`
/// samples of ~`seconds` each.
FmaPeak measure_fma_peak(double seconds = 0.02, int reps = 3);

/// The same on `threads` threads at once, summed: what the cores give together right now (on a
/// VM two vCPUs may share a physical core or be slowed by a neighbour).
FmaPeak measure_fma_peak_threads(int threads, double seconds = 0.02, int reps = 3);

}  // namespace troupe
