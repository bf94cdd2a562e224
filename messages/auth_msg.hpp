#pragma once
// Shared-secret handshake messages: a gatekeeper sends a random nonce, the client answers with
// HMAC-SHA256(secret, nonce); only a correct proof gets the service handle.

#include <string>

#include "messages/caf_compat.hpp"

namespace troupe {

/// Gatekeeper -> client: a fresh random nonce (raw bytes).
struct challenge_msg {
  std::string nonce;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, challenge_msg& x) {
  return f(caf::meta::type_name("challenge_msg"), x.nonce);
}

/// Client -> gatekeeper: the nonce it answers and HMAC-SHA256(secret, nonce) (raw 32 bytes).
struct proof_msg {
  std::string nonce;
  std::string mac;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, proof_msg& x) {
  return f(caf::meta::type_name("proof_msg"), x.nonce, x.mac);
}

}  // namespace troupe
