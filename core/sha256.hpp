#pragma once
// SHA-256 (FIPS 180-4). Used to authenticate cluster nodes (HMAC over a shared secret); not a
// general crypto library, so it offers exactly what the handshake needs.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace troupe {

/// A 32-byte SHA-256 digest.
using Sha256Digest = std::array<uint8_t, 32>;

/// Incremental SHA-256: update() any number of times, then finish() once.
class Sha256 {
 public:
  Sha256();
  /// Appends `size` bytes to the message.
  void update(const void* data, size_t size);
  void update(std::string_view data) { update(data.data(), data.size()); }
  /// Pads, returns the digest; the object must not be used afterwards.
  Sha256Digest finish();

  /// The input block size in bytes (64), needed by HMAC.
  static constexpr size_t block_size = 64;

 private:
  void compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> block_{};
  size_t block_used_ = 0;
  uint64_t total_bytes_ = 0;
};

/// SHA-256 of `data` in one call.
Sha256Digest sha256(std::string_view data);

/// Lower-case hex of arbitrary bytes ("ba7816bf...").
std::string to_hex(const uint8_t* data, size_t size);
/// Lower-case hex of a digest.
inline std::string to_hex(const Sha256Digest& d) { return to_hex(d.data(), d.size()); }

}  // namespace troupe
