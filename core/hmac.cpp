#include "core/hmac.hpp"

#include <array>

namespace troupe {

Sha256Digest hmac_sha256(std::string_view key, std::string_view message) {
  std::array<uint8_t, Sha256::block_size> key_block{};
  if (key.size() > Sha256::block_size) {
    // RFC 2104: keys longer than a block are hashed first.
    Sha256Digest hashed = sha256(key);
    std::copy(hashed.begin(), hashed.end(), key_block.begin());
  } else {
    std::copy(key.begin(), key.end(), key_block.begin());
  }
  std::array<uint8_t, Sha256::block_size> inner_pad, outer_pad;
  for (size_t i = 0; i < key_block.size(); ++i) {
    inner_pad[i] = key_block[i] ^ 0x36;
    outer_pad[i] = key_block[i] ^ 0x5c;
  }
  Sha256 inner;
  inner.update(inner_pad.data(), inner_pad.size());
  inner.update(message);
  Sha256Digest inner_digest = inner.finish();
  Sha256 outer;
  outer.update(outer_pad.data(), outer_pad.size());
  outer.update(inner_digest.data(), inner_digest.size());
  return outer.finish();
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace troupe
