#pragma once
// Where a node's shared cluster secret comes from: --secret-file, else $TROUPE_SECRET.

#include <cstddef>
#include <iosfwd>
#include <string>

namespace troupe {

/// A secret shorter than this is accepted (tests and demos use short ones on loopback) but warned
/// about: the handshake's HMAC is only as strong as the secret, and a few bytes fall to guessing.
constexpr size_t kRecommendedSecretBytes = 16;

/// Reads the secret from `secret_file` (trailing newlines dropped) or, when that is empty, from
/// the TROUPE_SECRET environment variable. Throws invalid_argument naming the file or variable
/// when there is no usable secret. A secret shorter than kRecommendedSecretBytes gets the
/// warning of short_secret_warning on `warnings` (std::cerr without that argument).
std::string load_shared_secret(const std::string& secret_file);
std::string load_shared_secret(const std::string& secret_file, std::ostream& warnings);

/// "" for a secret of at least kRecommendedSecretBytes; otherwise a one-line warning naming
/// where it came from (`source`), its length and the recommended minimum.
std::string short_secret_warning(const std::string& secret, const std::string& source);

}  // namespace troupe
