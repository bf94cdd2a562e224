#include "kernels/cpu/simd_level.hpp"

namespace troupe::cpu {

SimdLevel detected_simd_level() {
#if defined(__x86_64__) || defined(__i386__)
  static const SimdLevel level =
      __builtin_cpu_supports("avx2") ? SimdLevel::avx2 : SimdLevel::baseline;
  return level;
#else
  return SimdLevel::baseline;
#endif
}

const char* simd_level_name(SimdLevel level) {
  return level == SimdLevel::avx2 ? "avx2" : "baseline";
}

}  // namespace troupe::cpu
