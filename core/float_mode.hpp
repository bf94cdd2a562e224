#pragma once
// How the calling thread's floating-point unit treats subnormal (denormal) floats. With flushing
// on, a subnormal result becomes zero (x86 MXCSR FTZ, AArch64 FPCR FZ) and a subnormal input
// reads as zero (x86 DAZ). Training drives losses and gradients towards 1e-38 and below, where
// every GEMM on subnormal operands takes a microcode assist and runs many times slower; TensorFlow
// flushes on its CPU threads for this reason (ScopedFlushDenormal in its thread pools). The mode
// is per thread: whoever starts a thread that runs training kernels sets it there.

namespace troupe {

/// True when this thread flushes subnormal results and inputs to zero.
bool flush_denormals_enabled();

/// Sets (on) or clears (off) this thread's flush of subnormal results and inputs. On a CPU without
/// such a mode it does nothing and flush_denormals_enabled() stays false.
void set_flush_denormals(bool on);

/// Sets this thread's mode for the life of the object and restores the previous one after.
class ScopedFlushDenormals {
 public:
  explicit ScopedFlushDenormals(bool on) : previous_(flush_denormals_enabled()) {
    set_flush_denormals(on);
  }
  ~ScopedFlushDenormals() { set_flush_denormals(previous_); }
  ScopedFlushDenormals(const ScopedFlushDenormals&) = delete;
  ScopedFlushDenormals& operator=(const ScopedFlushDenormals&) = delete;

 private:
  bool previous_;
};

}  // namespace troupe
