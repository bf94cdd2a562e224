// The shared-secret file (net/shared_secret, --secret-file): the input is the file. A secret it
// returns is never empty and never ends in a newline; an unusable file is an invalid_argument
// naming it.
#include "core/status.hpp"
#include "net/shared_secret.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace troupe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = fuzz::write_scratch_file("secret", fuzz::as_text(data, size));
  try {
    std::string secret = load_shared_secret(path);
    fuzz::require(!secret.empty(), "a loaded secret is not empty");
    fuzz::require(secret.back() != '\n' && secret.back() != '\r', "trailing newlines are dropped");
  } catch (const Error& e) {
    fuzz::require(std::string(e.what()).find(path) != std::string::npos,
                  "the error names the file");
  }
  return 0;
}
