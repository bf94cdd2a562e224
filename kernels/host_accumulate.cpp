#include "kernels/host_accumulate.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace troupe {
namespace {

template <class T>
void accumulate(T* __restrict dst, const T* __restrict src, int64_t count) {
  for (int64_t i = 0; i < count; ++i) dst[i] += src[i];
}

template <class T>
void add(T* __restrict dst, const T* __restrict a, const T* __restrict b, int64_t count) {
  for (int64_t i = 0; i < count; ++i) dst[i] = a[i] + b[i];
}

// The sum and its exponent test in one loop (vectorised: an OR reduction of compares). A value is
// NaN or infinite exactly when its exponent bits are all ones. kAccumulate: dst += b (a unused).
template <class T, class Bits, bool kAccumulate>
bool sum_finite(T* __restrict dst, const T* __restrict a, const T* __restrict b, int64_t count,
                Bits exponent) {
  Bits bad = 0;
  for (int64_t i = 0; i < count; ++i) {
    const T sum = (kAccumulate ? dst[i] : a[i]) + b[i];
    dst[i] = sum;
    Bits bits;
    std::memcpy(&bits, &sum, sizeof bits);
    bad |= Bits((bits & exponent) == exponent);
  }
  return bad == 0;
}

template <class T, class Bits>
bool add_into_finite(void* dst, const void* a, const void* b, int64_t count, Bits exponent) {
  T* d = static_cast<T*>(dst);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  // As host_add_into: an operand aliasing dst is an accumulate (addition commutes).
  if (dst == b) return sum_finite<T, Bits, true>(d, nullptr, x, count, exponent);
  if (dst == a) return sum_finite<T, Bits, true>(d, nullptr, y, count, exponent);
  return sum_finite<T, Bits, false>(d, x, y, count, exponent);
}

#if defined(__x86_64__)

// Streaming sums: the vector loop stores with _mm512_stream_ps / _mm256_stream_pd etc. from the
// first 64-byte-aligned element of dst; the head and tail go through the plain loop. The exponent
// test is the plain loop's (an OR of compares), so the finiteness answer is the same.
template <class T, class Bits>
bool plain_sum_finite(T* __restrict dst, const T* __restrict a, const T* __restrict b,
                      int64_t count, Bits exponent) {
  return sum_finite<T, Bits, false>(dst, a, b, count, exponent);
}

int64_t head_to_alignment(const void* dst, size_t elem, int64_t count) {
  const auto misalign = reinterpret_cast<uintptr_t>(dst) % 64;
  if (misalign % elem != 0) return count;  // never aligned: all through the plain loop
  return std::min<int64_t>(count, int64_t(misalign == 0 ? 0 : (64 - misalign) / elem));
}

[[gnu::target("avx512f")]] bool stream_f32_avx512(float* dst, const float* a, const float* b,
                                                  int64_t count) {
  int64_t i = head_to_alignment(dst, sizeof(float), count);
  bool finite = plain_sum_finite<float, uint32_t>(dst, a, b, i, 0x7f800000u);
  const __m512i exponent = _mm512_set1_epi32(0x7f800000);
  __mmask16 bad = 0;
  for (; i + 16 <= count; i += 16) {
    const __m512 sum = _mm512_add_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));
    _mm512_stream_ps(dst + i, sum);
    bad |= _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(sum), exponent), exponent);
  }
  finite =
      plain_sum_finite<float, uint32_t>(dst + i, a + i, b + i, count - i, 0x7f800000u) && finite;
  _mm_sfence();
  return finite && bad == 0;
}

[[gnu::target("avx512f")]] bool stream_f64_avx512(double* dst, const double* a, const double* b,
                                                  int64_t count) {
  const uint64_t kExp = 0x7ff0000000000000ull;
  int64_t i = head_to_alignment(dst, sizeof(double), count);
  bool finite = plain_sum_finite<double, uint64_t>(dst, a, b, i, kExp);
  const __m512i exponent = _mm512_set1_epi64(int64_t(kExp));
  __mmask8 bad = 0;
  for (; i + 8 <= count; i += 8) {
    const __m512d sum = _mm512_add_pd(_mm512_loadu_pd(a + i), _mm512_loadu_pd(b + i));
    _mm512_stream_pd(dst + i, sum);
    bad |= _mm512_cmpeq_epi64_mask(_mm512_and_si512(_mm512_castpd_si512(sum), exponent), exponent);
  }
  finite = plain_sum_finite<double, uint64_t>(dst + i, a + i, b + i, count - i, kExp) && finite;
  _mm_sfence();
  return finite && bad == 0;
}

[[gnu::target("avx2")]] bool stream_f32_avx2(float* dst, const float* a, const float* b,
                                             int64_t count) {
  int64_t i = head_to_alignment(dst, sizeof(float), count);
  bool finite = plain_sum_finite<float, uint32_t>(dst, a, b, i, 0x7f800000u);
  const __m256i exponent = _mm256_set1_epi32(0x7f800000);
  __m256i bad = _mm256_setzero_si256();
  for (; i + 8 <= count; i += 8) {
    const __m256 sum = _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
    _mm256_stream_ps(dst + i, sum);
    bad = _mm256_or_si256(
        bad, _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(sum), exponent), exponent));
  }
  finite =
      plain_sum_finite<float, uint32_t>(dst + i, a + i, b + i, count - i, 0x7f800000u) && finite;
  _mm_sfence();
  return finite && _mm256_testz_si256(bad, bad);
}

[[gnu::target("avx2")]] bool stream_f64_avx2(double* dst, const double* a, const double* b,
                                             int64_t count) {
  const uint64_t kExp = 0x7ff0000000000000ull;
  int64_t i = head_to_alignment(dst, sizeof(double), count);
  bool finite = plain_sum_finite<double, uint64_t>(dst, a, b, i, kExp);
  const __m256i exponent = _mm256_set1_epi64x(int64_t(kExp));
  __m256i bad = _mm256_setzero_si256();
  for (; i + 4 <= count; i += 4) {
    const __m256d sum = _mm256_add_pd(_mm256_loadu_pd(a + i), _mm256_loadu_pd(b + i));
    _mm256_stream_pd(dst + i, sum);
    bad = _mm256_or_si256(
        bad, _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_castpd_si256(sum), exponent), exponent));
  }
  finite = plain_sum_finite<double, uint64_t>(dst + i, a + i, b + i, count - i, kExp) && finite;
  _mm_sfence();
  return finite && _mm256_testz_si256(bad, bad);
}
#endif

}  // namespace

bool cpu_runs_streaming_isa(StreamingIsa isa) {
#if defined(__x86_64__)
  switch (isa) {
    case StreamingIsa::widest:
    case StreamingIsa::none: return true;
    case StreamingIsa::avx512: return __builtin_cpu_supports("avx512f");
    case StreamingIsa::avx2: return __builtin_cpu_supports("avx2");
  }
  return false;
#else
  return isa == StreamingIsa::widest || isa == StreamingIsa::none;
#endif
}

bool host_add_into_finite_streaming_with(StreamingIsa isa, void* dst, const void* a, const void* b,
                                         DType dtype, int64_t count) {
#if defined(__x86_64__)
  const bool floating = dtype == DType::float32 || dtype == DType::float64;
  if (floating && dst != a && dst != b && isa != StreamingIsa::none) {
    const bool f32 = dtype == DType::float32;
    if ((isa == StreamingIsa::widest || isa == StreamingIsa::avx512) &&
        cpu_runs_streaming_isa(StreamingIsa::avx512))
      return f32 ? stream_f32_avx512(static_cast<float*>(dst), static_cast<const float*>(a),
                                     static_cast<const float*>(b), count)
                 : stream_f64_avx512(static_cast<double*>(dst), static_cast<const double*>(a),
                                     static_cast<const double*>(b), count);
    if (cpu_runs_streaming_isa(StreamingIsa::avx2))
      return f32 ? stream_f32_avx2(static_cast<float*>(dst), static_cast<const float*>(a),
                                   static_cast<const float*>(b), count)
                 : stream_f64_avx2(static_cast<double*>(dst), static_cast<const double*>(a),
                                   static_cast<const double*>(b), count);
  }
#else
  (void)isa;
#endif
  return host_add_into_finite(dst, a, b, dtype, count);
}

bool host_add_into_finite_streaming(void* dst, const void* a, const void* b, DType dtype,
                                    int64_t count) {
  return host_add_into_finite_streaming_with(StreamingIsa::widest, dst, a, b, dtype, count);
}

int64_t streaming_store_min_bytes() {
  static const int64_t bytes = [] {
    const long l3 = ::sysconf(_SC_LEVEL3_CACHE_SIZE);
    return l3 > 0 ? int64_t(l3) : int64_t(32) << 20;
  }();
  return bytes;
}

bool host_add_into_finite(void* dst, const void* a, const void* b, DType dtype, int64_t count) {
  if (dtype == DType::float32) return add_into_finite<float>(dst, a, b, count, 0x7f800000u);
  if (dtype == DType::float64)
    return add_into_finite<double>(dst, a, b, count, uint64_t(0x7ff0000000000000ull));
  host_add_into(dst, a, b, dtype, count);
  return true;
}

void host_accumulate(void* dst, const void* src, DType dtype, int64_t count) {
  dispatch_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    accumulate(static_cast<T*>(dst), static_cast<const T*>(src), count);
  });
}

void host_add_into(void* dst, const void* a, const void* b, DType dtype, int64_t count) {
  // Aliasing dst with an operand would break the __restrict promise of add(): route it to the
  // accumulate loop instead (addition commutes).
  if (dst == b) return host_accumulate(dst, a, dtype, count);
  if (dst == a) return host_accumulate(dst, b, dtype, count);
  dispatch_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    add(static_cast<T*>(dst), static_cast<const T*>(a), static_cast<const T*>(b), count);
  });
}

}  // namespace troupe
