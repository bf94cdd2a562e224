#include "core/float_mode.hpp"

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace troupe {
namespace {

#if defined(__x86_64__) || defined(__i386__)
constexpr unsigned kFlushToZero = 0x8000;     // MXCSR bit 15: subnormal results become 0
constexpr unsigned kDenormalsAreZero = 0x40;  // MXCSR bit 6: subnormal inputs read as 0
constexpr unsigned kBoth = kFlushToZero | kDenormalsAreZero;
#elif defined(__aarch64__)
constexpr uint64_t kFlushToZero = uint64_t(1) << 24;  // FPCR.FZ: both directions on AArch64

uint64_t read_fpcr() {
  uint64_t fpcr;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  return fpcr;
}
void write_fpcr(uint64_t fpcr) { __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr)); }
#endif

}  // namespace

bool flush_denormals_enabled() {
#if defined(__x86_64__) || defined(__i386__)
  return (_mm_getcsr() & kBoth) == kBoth;
#elif defined(__aarch64__)
  return (read_fpcr() & kFlushToZero) != 0;
#else
  return false;
#endif
}

void set_flush_denormals(bool on) {
#if defined(__x86_64__) || defined(__i386__)
  const unsigned csr = _mm_getcsr();
  _mm_setcsr(on ? (csr | kBoth) : (csr & ~kBoth));
#elif defined(__aarch64__)
  const uint64_t fpcr = read_fpcr();
  write_fpcr(on ? (fpcr | kFlushToZero) : (fpcr & ~kFlushToZero));
#else
  (void)on;
#endif
}

}  // namespace troupe
