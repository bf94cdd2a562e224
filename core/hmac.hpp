#pragma once
// HMAC-SHA256 (RFC 2104) and a constant-time comparison, for the shared-secret handshake
// between cluster nodes.

#include <string_view>

#include "core/sha256.hpp"

namespace troupe {

/// HMAC-SHA256(key, message).
Sha256Digest hmac_sha256(std::string_view key, std::string_view message);

/// Compares two byte strings in time independent of where they differ (no timing oracle).
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace troupe
