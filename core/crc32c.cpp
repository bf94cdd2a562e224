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
__attribute__((target("sse4.2"))) uint32_t extend_sse42(uint32_t crc, const uint8_t* p, size_t n) {
  uint64_t c = ~crc;
  while (n && (reinterpret_cast<uintptr_t>(p) & 7)) {
    c = _mm_crc32_u8(uint32_t(c), *p++);
    --n;
  }
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = _mm_crc32_u64(c, word);
  }
  for (; n; --n) c = _mm_crc32_u8(uint32_t(c), *p++);
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
