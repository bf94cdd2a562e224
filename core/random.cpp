#include "core/random.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/status.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace troupe {
namespace {

constexpr uint32_t kMul0 = 0xD2511F53u;
constexpr uint32_t kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u;
constexpr uint32_t kWeyl1 = 0xBB67AE85u;

inline void mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  uint64_t p = uint64_t(a) * uint64_t(b);
  hi = uint32_t(p >> 32);
  lo = uint32_t(p);
}

#define TROUPE_INLINE inline __attribute__((always_inline))

TROUPE_INLINE float bits_to_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

TROUPE_INLINE uint32_t float_to_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// Cephes logf: m * 2^-24 = f * 2^e with f in [sqrt(1/2), sqrt(2)), ln f = z - z^2/2 + z^3 P(z)
// for z = f - 1 (exact), and e ln 2 added in two parts so the sum keeps its low bits.
TROUPE_INLINE float log_unit_impl(uint32_t m) {
  uint32_t bits = float_to_bits(float(int32_t(m)));  // exact: m <= 2^24
  int32_t e = int32_t(bits >> 23) - 126 - 24;        // m * 2^-24 = f * 2^e, f in [0.5, 1)
  uint32_t mantissa = bits & 0x007FFFFFu;
  // f < sqrt(1/2) (0x3F3504F3): use 2f and e - 1. Selected on integers, because GCC will not
  // if-convert (and so not vectorise) a float operation under a condition.
  bool low = mantissa < 0x003504F3u;
  e = low ? e - 1 : e;
  float x = bits_to_float(mantissa | (low ? 0x3F800000u : 0x3F000000u)) - 1.0f;  // exact
  float z = x * x;
  float y = 7.0376836292e-2f;
  y = y * x - 1.1514610310e-1f;
  y = y * x + 1.1676998740e-1f;
  y = y * x - 1.2420140846e-1f;
  y = y * x + 1.4249322787e-1f;
  y = y * x - 1.6668057665e-1f;
  y = y * x + 2.0000714765e-1f;
  y = y * x - 2.4999993993e-1f;
  y = y * x + 3.3333331174e-1f;
  y = y * x * z;
  float fe = float(e);
  y = y + -2.12194440e-4f * fe;
  y = y - 0.5f * z;
  x = x + y;
  return x + 0.693359375f * fe;
}

// Cephes sinf/cosf polynomials on [-pi/4, pi/4].
TROUPE_INLINE void sincos_impl(float x, float& s, float& c) {
  float z = x * x;
  float ps = -1.9515295891e-4f;
  ps = ps * z + 8.3321608736e-3f;
  ps = ps * z - 1.6666654611e-1f;
  s = ps * z * x + x;
  float pc = 2.443315711809948e-5f;
  pc = pc * z - 1.388731625493765e-3f;
  pc = pc * z + 4.166664568298827e-2f;
  c = pc * z * z - 0.5f * z + 1.0f;
}

// Angle step: the 22 low angle bits pick one of 2^22 equal steps across a quarter turn.
constexpr float kQuarterTurnStep = float(1.5707963267948966 / 4194304.0);

TROUPE_INLINE void pair_impl(uint32_t radius, uint32_t angle, float& x, float& y) {
  // u = ((radius >> 8) + 1) * 2^-24 in (0, 1], so the log is finite and <= 0.
  float r = std::sqrt(-2.0f * log_unit_impl((radius >> 8) + 1));
  // t = q pi/2 + a, a in (-pi/4, pi/4): the top two bits pick the quadrant, so the polynomials
  // only see [-pi/4, pi/4] and no range reduction can lose bits. t is uniform on a full turn.
  uint32_t q = angle >> 30;
  int32_t k = int32_t((angle >> 8) & 0x3FFFFFu) - 0x200000;
  float a = (float(k) + 0.5f) * kQuarterTurnStep;
  float s, c;
  sincos_impl(a, s, c);
  // Rotate (c, s) by q quarter turns: swap for odd q, then flip signs (as sign bits, which the
  // vectoriser takes where it would not take a conditional negation).
  float cos_t = (q & 1) ? s : c;
  float sin_t = (q & 1) ? c : s;
  cos_t = bits_to_float(float_to_bits(cos_t) ^ (((q + 1) & 2u) << 30));
  sin_t = bits_to_float(float_to_bits(sin_t) ^ ((q & 2u) << 30));
  x = r * cos_t;
  y = r * sin_t;
}

struct Key {
  uint32_t k0, k1, s0, s1;
};

// Philox's ten rounds over kBlocks counters at once: plain fixed-length loops, which GCC
// vectorises (pmuludq for the 32x32->64 products). The AVX-512 path has its own (below).
struct VectorisedRounds {
  template <int kBlocks>
  static TROUPE_INLINE void run(uint32_t* c0, uint32_t* c1, uint32_t* c2, uint32_t* c3, Key key) {
    uint32_t k0 = key.k0, k1 = key.k1;
    for (int round = 0; round < 10; ++round) {
#pragma GCC unroll 1  // fully unrolled, the lanes are not vectorised
      for (int j = 0; j < kBlocks; ++j) {
        uint64_t p0 = uint64_t(kMul0) * c0[j], p1 = uint64_t(kMul1) * c2[j];
        uint32_t n0 = uint32_t(p1 >> 32) ^ c1[j] ^ k0;
        uint32_t n2 = uint32_t(p0 >> 32) ^ c3[j] ^ k1;
        c0[j] = n0;
        c1[j] = uint32_t(p1);
        c2[j] = n2;
        c3[j] = uint32_t(p0);
      }
      k0 += kWeyl0;
      k1 += kWeyl1;
    }
  }
};

// The 4 * kBlocks normals of blocks [first_block, first_block + kBlocks), in element order. More
// blocks give the vector units more independent work (32: 1.8 ns/element with AVX2, 16: 2.1).
template <int kBlocks, class Rounds>
TROUPE_INLINE void normal_chunk(uint64_t first_block, Key key, float* out) {
  alignas(64) uint32_t c0[kBlocks], c1[kBlocks], c2[kBlocks], c3[kBlocks];
  for (int j = 0; j < kBlocks; ++j) {
    uint64_t counter = first_block + uint64_t(j);
    c0[j] = uint32_t(counter);
    c1[j] = uint32_t(counter >> 32);
    c2[j] = key.s0;
    c3[j] = key.s1;
  }
  Rounds::template run<kBlocks>(c0, c1, c2, c3, key);
  float x0[kBlocks], y0[kBlocks], x1[kBlocks], y1[kBlocks];
#pragma GCC unroll 1
  for (int j = 0; j < kBlocks; ++j) {
    pair_impl(c0[j], c1[j], x0[j], y0[j]);
    pair_impl(c2[j], c3[j], x1[j], y1[j]);
  }
  for (int j = 0; j < kBlocks; ++j) {
    out[4 * j] = x0[j];
    out[4 * j + 1] = y0[j];
    out[4 * j + 2] = x1[j];
    out[4 * j + 3] = y1[j];
  }
}

constexpr int kWide = 32;  // blocks per chunk in the body of a fill
constexpr int kTail = 8;   // blocks per chunk at a ragged start or end: less work thrown away

// Whole chunks straight into `out`; a ragged head or tail through a scratch chunk.
template <class Rounds>
TROUPE_INLINE void fill_normal_impl(Key key, float* out, uint64_t first, int64_t n) {
  float scratch[4 * kTail];
  uint64_t i = first, end = first + uint64_t(n);
  while (i < end) {
    float* dst = out + (i - first);
    if (i % 4 == 0 && end - i >= 4 * kWide) {
      normal_chunk<kWide, Rounds>(i / 4, key, dst);
      i += 4 * kWide;
    } else if (i % 4 == 0 && end - i >= 4 * kTail) {
      normal_chunk<kTail, Rounds>(i / 4, key, dst);
      i += 4 * kTail;
    } else {
      normal_chunk<kTail, Rounds>(i / 4, key, scratch);
      uint64_t skip = i % 4, take = std::min<uint64_t>(4 * kTail - skip, end - i);
      std::memcpy(dst, scratch + skip, take * sizeof(float));
      i += take;
    }
  }
}

void fill_normal_baseline(Key key, float* out, uint64_t first, int64_t n) {
  fill_normal_impl<VectorisedRounds>(key, out, first, n);
}

// The same source compiled for AVX2 (8 lanes instead of 4). No FMA: the target does not enable
// it and -ffp-contract=off would forbid it, so the bits match the baseline path.
#if defined(__x86_64__) && defined(__GNUC__)
constexpr bool kHaveAvx2Path = true;
__attribute__((target("avx2"))) void fill_normal_avx2(Key key, float* out, uint64_t first,
                                                      int64_t n) {
  fill_normal_impl<VectorisedRounds>(key, out, first, n);
}
bool cpu_has_avx2() { return __builtin_cpu_supports("avx2"); }
// 16 lanes. GCC vectorises VectorisedRounds' products for AVX-512 with vpmullq, a full 64x64
// product (3 uops on Intel cores), beside vpmuludq; these rounds take every product with
// vpmuludq, from the even and the odd 32-bit lanes of 16 counters.
constexpr bool kHaveAvx512Path = true;
#define TROUPE_AVX512 __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw")))
struct Avx512Rounds {
  // The high and low words of a * m in each of 16 lanes (m: the multiplier in every lane). The
  // maskz forms with every lane selected are the plain instructions; GCC 12's plain intrinsics
  // pass an undefined source operand that -Wmaybe-uninitialized reports (GCC bug 105593).
  TROUPE_AVX512 static inline void mulhilo16(__m512i a, __m512i m, __m512i& hi, __m512i& lo) {
    constexpr __mmask8 all = 0xFF;
    const __m512i even = _mm512_maskz_mul_epu32(all, a, m);  // lanes 0, 2, ...
    const __m512i odd = _mm512_maskz_mul_epu32(all, _mm512_maskz_srli_epi64(all, a, 32), m);
    lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_maskz_slli_epi64(all, odd, 32));
    hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_maskz_srli_epi64(all, even, 32), odd);
  }
  template <int kBlocks>
  TROUPE_AVX512 static inline void run(uint32_t* c0, uint32_t* c1, uint32_t* c2, uint32_t* c3,
                                       Key key) {
    if constexpr (kBlocks % 16 != 0) {
      VectorisedRounds::run<kBlocks>(c0, c1, c2, c3, key);
    } else {
      const __m512i m0 = _mm512_set1_epi32(int32_t(kMul0)), m1 = _mm512_set1_epi32(int32_t(kMul1));
      for (int v = 0; v < kBlocks; v += 16) {
        __m512i x0 = _mm512_load_si512(c0 + v), x1 = _mm512_load_si512(c1 + v);
        __m512i x2 = _mm512_load_si512(c2 + v), x3 = _mm512_load_si512(c3 + v);
        uint32_t k0 = key.k0, k1 = key.k1;
        for (int round = 0; round < 10; ++round) {  // as VectorisedRounds, 16 counters at once
          __m512i hi0, lo0, hi1, lo1;
          mulhilo16(x0, m0, hi0, lo0);
          mulhilo16(x2, m1, hi1, lo1);
          x0 = _mm512_xor_si512(_mm512_xor_si512(hi1, x1), _mm512_set1_epi32(int32_t(k0)));
          x1 = lo1;
          x2 = _mm512_xor_si512(_mm512_xor_si512(hi0, x3), _mm512_set1_epi32(int32_t(k1)));
          x3 = lo0;
          k0 += kWeyl0;
          k1 += kWeyl1;
        }
        _mm512_store_si512(c0 + v, x0);
        _mm512_store_si512(c1 + v, x1);
        _mm512_store_si512(c2 + v, x2);
        _mm512_store_si512(c3 + v, x3);
      }
    }
  }
};
// flatten: the generic chunk code inlines into this AVX-512 function and takes the rounds above.
TROUPE_AVX512 __attribute__((flatten)) void fill_normal_avx512(Key key, float* out, uint64_t first,
                                                               int64_t n) {
  fill_normal_impl<Avx512Rounds>(key, out, first, n);
}
bool cpu_has_avx512() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
}
#else
constexpr bool kHaveAvx2Path = false;
void fill_normal_avx2(Key key, float* out, uint64_t first, int64_t n) {
  fill_normal_impl<VectorisedRounds>(key, out, first, n);
}
bool cpu_has_avx2() { return false; }
constexpr bool kHaveAvx512Path = false;
void fill_normal_avx512(Key key, float* out, uint64_t first, int64_t n) {
  fill_normal_impl<VectorisedRounds>(key, out, first, n);
}
bool cpu_has_avx512() { return false; }
#endif

}  // namespace

Philox::Block Philox::block(uint64_t counter) const {
  Block c{uint32_t(counter), uint32_t(counter >> 32), uint32_t(stream_), uint32_t(stream_ >> 32)};
  uint32_t k0 = uint32_t(seed_), k1 = uint32_t(seed_ >> 32);
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    mulhilo(kMul0, c[0], hi0, lo0);
    mulhilo(kMul1, c[2], hi1, lo1);
    c = {hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0};
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return c;
}

uint32_t Philox::bits(uint64_t index) const { return block(index / 4)[index % 4]; }

float Philox::uniform_float(uint64_t index) const {
  return float(bits(index) >> 8) * (1.0f / 16777216.0f);
}

double Philox::uniform_double(uint64_t index) const {
  Block b = block(index);
  uint64_t x = (uint64_t(b[0]) << 32 | b[1]) >> 11;
  return double(x) * (1.0 / 9007199254740992.0);
}

double Philox::normal(uint64_t index) const {
  Block b = block(index);
  // u1 in (0, 1] so log() is finite; u2 in [0, 1).
  double u1 = (double((uint64_t(b[0]) << 32 | b[1]) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
  double u2 = double((uint64_t(b[2]) << 32 | b[3]) >> 11) * (1.0 / 9007199254740992.0);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

bool Philox::supports(Isa isa) {
  if (isa == Isa::avx2) return kHaveAvx2Path && cpu_has_avx2();
  if (isa == Isa::avx512) return kHaveAvx512Path && cpu_has_avx512();
  return true;
}

void Philox::fill_normal(float* out, uint64_t first, int64_t n, Isa isa) const {
  if (n <= 0) return;
  if (!supports(isa))
    throw invalid_argument(std::string("Philox::fill_normal: this CPU cannot run ") +
                           (isa == Isa::avx2 ? "AVX2" : "AVX-512"));
  Key key{uint32_t(seed_), uint32_t(seed_ >> 32), uint32_t(stream_), uint32_t(stream_ >> 32)};
  if (isa == Isa::automatic)
    isa = supports(Isa::avx512) ? Isa::avx512 : supports(Isa::avx2) ? Isa::avx2 : Isa::baseline;
  if (isa == Isa::avx512)
    fill_normal_avx512(key, out, first, n);
  else if (isa == Isa::avx2)
    fill_normal_avx2(key, out, first, n);
  else
    fill_normal_baseline(key, out, first, n);
}

namespace random_math {

float log_unit(uint32_t m) { return log_unit_impl(m); }
void sincos_quarter(float y, float& sin_y, float& cos_y) { sincos_impl(y, sin_y, cos_y); }
void normal_pair(uint32_t radius, uint32_t angle, float& x, float& y) {
  pair_impl(radius, angle, x, y);
}

}  // namespace random_math
}  // namespace troupe
