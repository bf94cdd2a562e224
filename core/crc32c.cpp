#include "core/crc32c.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define TROUPE_CRC32C_X86 1
#endif

namespace troupe {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli polynomial

using Tables = std::array<std::array<uint32_t, 256>, 8>;

Tables make_tables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i)
    for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  return t;
}

// A function-local constant, built once on first use (thread-safe static init), not a mutable
// global.
const Tables& tables() {
  static const Tables t = make_tables();
  return t;
}

#ifdef TROUPE_CRC32C_X86
// The crc32 instruction takes 3 cycles and a new one can start every cycle, so one chain of
// them runs at a third of the unit's rate. Blocks of 3 x kLong (or 3 x kShort) bytes run three
// independent chains, then join them: crc(A|B) = zeros(crc(A), |B|) ^ crc(B), where `zeros`
// appends |B| zero bytes to a CRC — a fixed linear map over GF(2), applied by four table
// lookups (M. Adler's construction, as in zlib's crc32_combine).
constexpr size_t kLong = 8192;
constexpr size_t kShort = 256;

using ZerosTable = std::array<std::array<uint32_t, 256>, 4>;

uint32_t gf2_times(const uint32_t* mat, uint32_t vec) {
  uint32_t sum = 0;
  for (; vec; vec >>= 1, ++mat)
    if (vec & 1) sum ^= *mat;
  return sum;
}

void gf2_square(uint32_t* square, const uint32_t* mat) {
  for (int n = 0; n < 32; ++n) square[n] = gf2_times(mat, mat[n]);
}

// The table that appends `len` zero bytes (a power of two) to a CRC.
ZerosTable make_zeros_table(size_t len) {
  uint32_t op[32], other[32];
  other[0] = kPoly;  // one zero bit
  for (int n = 1; n < 32; ++n) other[n] = 1u << (n - 1);
  gf2_square(op, other);  // two zero bits
  gf2_square(other, op);  // four
  gf2_square(op, other);  // one zero byte
  for (; len > 1; len >>= 1) {
    gf2_square(other, op);
    std::memcpy(op, other, sizeof(op));
  }
  ZerosTable z{};
  for (uint32_t n = 0; n < 256; ++n)
    for (int b = 0; b < 4; ++b) z[b][n] = gf2_times(op, n << (8 * b));
  return z;
}

uint32_t append_zeros(const ZerosTable& z, uint32_t crc) {
  return z[0][crc & 0xff] ^ z[1][(crc >> 8) & 0xff] ^ z[2][(crc >> 16) & 0xff] ^ z[3][crc >> 24];
}

__attribute__((target("sse4.2"))) uint64_t crc_words(uint64_t c, const uint8_t* p, size_t n) {
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = _mm_crc32_u64(c, word);
  }
  return c;
}

// Three chains over [p, p + 3 * block); `c` already holds the CRC so far.
template <size_t block>
__attribute__((target("sse4.2"))) uint64_t crc_three_blocks(uint64_t c, const uint8_t* p,
                                                            const ZerosTable& zeros) {
  uint64_t c1 = 0, c2 = 0;
  for (size_t i = 0; i < block; i += 8) {
    uint64_t w0, w1, w2;
    std::memcpy(&w0, p + i, 8);
    std::memcpy(&w1, p + block + i, 8);
    std::memcpy(&w2, p + 2 * block + i, 8);
    c = _mm_crc32_u64(c, w0);
    c1 = _mm_crc32_u64(c1, w1);
    c2 = _mm_crc32_u64(c2, w2);
  }
  c = append_zeros(zeros, uint32_t(c)) ^ c1;
  return append_zeros(zeros, uint32_t(c)) ^ c2;
}

__attribute__((target("sse4.2"))) uint32_t extend_sse42(uint32_t crc, const uint8_t* p, size_t n) {
  static const ZerosTable long_zeros = make_zeros_table(kLong);
  static const ZerosTable short_zeros = make_zeros_table(kShort);
  uint64_t c = ~crc;
  while (n && (reinterpret_cast<uintptr_t>(p) & 7)) {
    c = _mm_crc32_u8(uint32_t(c), *p++);
    --n;
  }
  for (; n >= 3 * kLong; n -= 3 * kLong, p += 3 * kLong)
    c = crc_three_blocks<kLong>(c, p, long_zeros);
  for (; n >= 3 * kShort; n -= 3 * kShort, p += 3 * kShort)
    c = crc_three_blocks<kShort>(c, p, short_zeros);
  c = crc_words(c, p, n);
  p += n & ~size_t(7);
  for (n &= 7; n; --n) c = _mm_crc32_u8(uint32_t(c), *p++);
  return ~uint32_t(c);
}

bool cpu_has_sse42() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
}
#endif

}  // namespace

uint32_t crc32c_extend_portable(uint32_t crc, const void* data, size_t n) {
  const Tables& t = tables();
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
  for (; n >= 8; n -= 8, p += 8) {
    // Little-endian load of 8 bytes: the first four fold into the running CRC.
    uint32_t lo =
        c ^ (uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24);
    c = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
        t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
  }
  for (; n; --n) c = (c >> 8) ^ t[0][(c ^ *p++) & 0xff];
  return ~c;
}

bool crc32c_uses_hardware() {
#ifdef TROUPE_CRC32C_X86
  static const bool has = cpu_has_sse42();
  return has;
#else
  return false;
#endif
}

uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size) {
#ifdef TROUPE_CRC32C_X86
  if (crc32c_uses_hardware()) return extend_sse42(crc, static_cast<const uint8_t*>(data), size);
#endif
  return crc32c_extend_portable(crc, data, size);
}

}  // namespace troupe
