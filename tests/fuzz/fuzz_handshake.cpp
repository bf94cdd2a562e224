// The shared-secret handshake (net/gatekeeper, messages/auth_msg) as a node meets it: a proof_msg
// or challenge_msg deserialized from another process's bytes. One actor system and gatekeeper
// live for the whole run; per input the harness asks for a challenge and sends the decoded
// proof, using the real nonce when byte 0 is odd so the HMAC check is reached. The gatekeeper
// must refuse with "authentication failed: ...", never hand out the service or crash.
#include <iostream>

#include <caf/all.hpp>

#include "core/status.hpp"
#include "messages/atoms.hpp"
#include "messages/auth_msg.hpp"
#include "messages/caf_compat.hpp"
#include "messages/error_channel.hpp"
#include "messages/system_config.hpp"
#include "net/gatekeeper.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace troupe;

namespace {

caf::actor_system_config& configured(caf::actor_system_config& config) {
  configure_actor_system(config, ActorSystemOptions::in_process(1));
  return config;
}

struct Node {
  caf::actor_system_config config;
  caf::actor_system system{configured(config)};
  // An argument, because CAF 0.17 binds a null std::tuple<> reference for argument-less lambdas.
  caf::actor service =
      system.spawn([](caf::event_based_actor*,
                      int offset) -> caf::behavior { return {[=](int x) { return x + offset; }}; },
                   0);
  caf::actor gatekeeper = spawn_gatekeeper(system, "fuzz-handshake-secret", service);
};

Node& node() {
  static Node* n = new Node;  // lives until exit: actor systems do not like static teardown
  return *n;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::cerr.rdbuf(nullptr);  // the gatekeeper logs every refusal; sanitizers write to fd 2
  node();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char* bytes = reinterpret_cast<const char*>(data + 1);
  size_t n = size - 1;
  challenge_msg challenge;
  if (!wire::from_bytes(bytes, n, challenge))  // what a client does with an answered hello
    challenge_proof("fuzz-handshake-secret", challenge.nonce);
  proof_msg proof;
  if (wire::from_bytes(bytes, n, proof)) return 0;
  caf::scoped_actor self{node().system};
  if (data[0] & 1) {
    self->request(node().gatekeeper, caf::infinite, hello_atom::value)
        .receive([&](const challenge_msg& fresh) { proof.nonce = fresh.nonce; },
                 [&](const caf::error&) { fuzz::require(false, "hello is answered"); });
  }
  self->request(node().gatekeeper, caf::infinite, prove_atom::value, proof)
      .receive([&](const caf::actor&) { fuzz::require(false, "a forged proof was accepted"); },
               [&](const caf::error& err) {
                 std::string text = to_status(err).message();
                 fuzz::require(text.find("authentication failed") != std::string::npos,
                               "a refusal says authentication failed");
               });
  return 0;
}
