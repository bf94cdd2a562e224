#pragma once
// CRC32C (Castagnoli polynomial 0x1EDC6F41, reflected 0x82F63B78), the checksum TFRecord files,
// iSCSI (RFC 3720) and ext4 use. The SSE4.2 crc32 instruction computes it in hardware; a
// slice-by-8 table version is the portable fallback. The choice is made once, at run time.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace troupe {

/// CRC32C of `size` bytes continuing from a previous `crc` (0 to start).
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size);

/// CRC32C of a whole byte range: crc32c("123456789") == 0xE3069283.
inline uint32_t crc32c(const void* data, size_t size) { return crc32c_extend(0, data, size); }
inline uint32_t crc32c(std::string_view bytes) { return crc32c(bytes.data(), bytes.size()); }

/// The portable slice-by-8 implementation (exposed so tests can compare it with hardware).
uint32_t crc32c_extend_portable(uint32_t crc, const void* data, size_t size);

/// True when the SSE4.2 instruction is used on this machine.
bool crc32c_uses_hardware();

/// TFRecord's masked CRC: rotate right by 15 and add a constant, so that a CRC stored inside
/// checksummed data does not checksum to a fixed value.
inline uint32_t crc32c_mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }
/// Inverse of crc32c_mask.
inline uint32_t crc32c_unmask(uint32_t masked) {
  uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

}  // namespace troupe
