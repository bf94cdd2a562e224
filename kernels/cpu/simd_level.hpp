#pragma once
// The vector instruction set the CPU element-wise kernels run with, found at run time, so one
// binary serves every x86-64 machine: kernels measured to gain from wider vectors are compiled a
// second time with [[gnu::target("avx2")]] and registered instead of the baseline (SSE2) build
// when the CPU has AVX2. AVX-512 machines take the AVX2 variant: on the model's sizes a 512-bit
// build measured no faster (docs/kernels.md). Internal to kernels/cpu.

namespace troupe::cpu {

enum class SimdLevel { baseline, avx2 };

/// avx2 when this CPU supports it (__builtin_cpu_supports), else baseline.
SimdLevel detected_simd_level();

/// "baseline" or "avx2".
const char* simd_level_name(SimdLevel level);

}  // namespace troupe::cpu
