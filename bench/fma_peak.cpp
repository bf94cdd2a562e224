#include "bench/fma_peak.hpp"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace troupe {
namespace {

// 12 independent chains: more than latency x pipes (4 x 2) on x86 cores with two FMA pipes, so
// the loop is bound by the pipes' throughput, not by one chain's latency; with the two constants
// they fit AVX2's 16 vector registers (no spills).
constexpr int kChains = 12;
// Iterations of the unrolled body between clock reads.
constexpr long kBlock = 1 << 16;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Times blocks of kBlock iterations of `Loop::run` until `seconds` have passed; returns
// iterations per second. `Loop` holds the chains; its run is compiled for its ISA (a lambda would
// not inherit the target attribute of the function it is written in).
template <class Loop>
double iterations_per_s(Loop& loop, double seconds) {
  const auto start = std::chrono::steady_clock::now();
  long done = 0;
  double elapsed = 0;
  do {
    loop.run(kBlock);
    done += kBlock;
    elapsed = seconds_since(start);
  } while (elapsed < seconds);
  return double(done) / elapsed;
}

// Where the chains' sum goes: a volatile store, so the compiler cannot drop the loops.
volatile float g_sink;

#if defined(__x86_64__)
struct Avx512Loop {
  __m512 acc[kChains], mul, add;
  [[gnu::target("avx512f")]] Avx512Loop()
      : mul(_mm512_set1_ps(0.999999f)), add(_mm512_set1_ps(1e-6f)) {
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(float(i));
  }
  [[gnu::target("avx512f")]] void run(long n) {
    __m512 a[kChains];
    for (int i = 0; i < kChains; ++i) a[i] = acc[i];
    for (long k = 0; k < n; ++k) {
#pragma GCC unroll 12
      for (int i = 0; i < kChains; ++i) a[i] = _mm512_fmadd_ps(a[i], mul, add);
    }
    for (int i = 0; i < kChains; ++i) acc[i] = a[i];
  }
  [[gnu::target("avx512f")]] float sum() const {
    __m512 s = acc[0];
    for (int i = 1; i < kChains; ++i) s = _mm512_add_ps(s, acc[i]);
    float lanes[16];
    _mm512_storeu_ps(lanes, s);
    return lanes[0] + lanes[15];
  }
};

struct Avx2Loop {
  __m256 acc[kChains], mul, add;
  [[gnu::target("avx2,fma")]] Avx2Loop()
      : mul(_mm256_set1_ps(0.999999f)), add(_mm256_set1_ps(1e-6f)) {
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(float(i));
  }
  [[gnu::target("avx2,fma")]] void run(long n) {
    __m256 a[kChains];
    for (int i = 0; i < kChains; ++i) a[i] = acc[i];
    for (long k = 0; k < n; ++k) {
#pragma GCC unroll 12
      for (int i = 0; i < kChains; ++i) a[i] = _mm256_fmadd_ps(a[i], mul, add);
    }
    for (int i = 0; i < kChains; ++i) acc[i] = a[i];
  }
  [[gnu::target("avx2,fma")]] float sum() const {
    __m256 s = acc[0];
    for (int i = 1; i < kChains; ++i) s = _mm256_add_ps(s, acc[i]);
    float lanes[8];
    _mm256_storeu_ps(lanes, s);
    return lanes[0] + lanes[7];
  }
};
#endif

// Without FMA: a multiply and an add per lane and chain, 4 lanes (SSE2 is x86-64's baseline).
struct PortableLoop {
  float acc[kChains][4];
  PortableLoop() {
    for (int i = 0; i < kChains; ++i)
      for (int l = 0; l < 4; ++l) acc[i][l] = float(i + l);
  }
  void run(long n) {
    for (long k = 0; k < n; ++k) {
#pragma GCC unroll 12
      for (int i = 0; i < kChains; ++i)
        for (int l = 0; l < 4; ++l) acc[i][l] = acc[i][l] * 0.999999f + 1e-6f;
    }
  }
  float sum() const {
    float s = 0;
    for (auto& chain : acc)
      for (float v : chain) s += v;
    return s;
  }
};

// GFLOP/s of `loop`: iterations x chains x lanes x 2 FLOPs.
template <class Loop>
double gflops_of(int lanes, double seconds) {
  Loop loop;
  const double per_s = iterations_per_s(loop, seconds);
  g_sink = loop.sum();
  return per_s * kChains * lanes * 2 / 1e9;
}

FmaPeak sample(double seconds) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) return {gflops_of<Avx512Loop>(16, seconds), "avx512f"};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {gflops_of<Avx2Loop>(8, seconds), "avx2+fma"};
#endif
  return {gflops_of<PortableLoop>(4, seconds), "sse2"};
}

}  // namespace

FmaPeak measure_fma_peak(double seconds, int reps) {
  FmaPeak best;
  for (int r = 0; r < std::max(1, reps); ++r) {
    const FmaPeak now = sample(seconds);
    if (now.gflops > best.gflops) best = now;
  }
  return best;
}

FmaPeak measure_fma_peak_threads(int threads, double seconds, int reps) {
  std::vector<FmaPeak> peaks(size_t(std::max(1, threads)));
  std::vector<std::thread> pool;
  for (size_t t = 0; t < peaks.size(); ++t)
    pool.emplace_back([&, t] { peaks[t] = measure_fma_peak(seconds, reps); });
  for (auto& th : pool) th.join();
  FmaPeak total{0, peaks[0].isa};
  for (auto& p : peaks) total.gflops += p.gflops;
  return total;
}

}  // namespace troupe
