#include "net/shared_secret.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/status.hpp"

namespace troupe {
namespace {

// The secret and where it came from ("secret file 'F'" or "TROUPE_SECRET").
std::pair<std::string, std::string> read_secret(const std::string& secret_file) {
  if (!secret_file.empty()) {
    // An ifstream opens a directory and then reads nothing, which would read as "empty".
    if (std::filesystem::is_directory(secret_file))
      throw invalid_argument("secret file '" + secret_file + "' is a directory");
    std::ifstream in(secret_file, std::ios::binary);
    if (!in) throw invalid_argument("cannot read secret file '" + secret_file + "'");
    std::ostringstream text;
    text << in.rdbuf();
    std::string secret = text.str();
    while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
    if (secret.empty()) throw invalid_argument("secret file '" + secret_file + "' is empty");
    return {secret, "secret file '" + secret_file + "'"};
  }
  std::string secret;
  if (const char* env = std::getenv("TROUPE_SECRET")) secret = env;
  if (secret.empty())
    throw invalid_argument(
        "no shared secret: pass --secret-file FILE or set TROUPE_SECRET (cluster nodes must "
        "share one)");
  return {secret, "TROUPE_SECRET"};
}

}  // namespace

std::string short_secret_warning(const std::string& secret, const std::string& source) {
  if (secret.size() >= kRecommendedSecretBytes) return "";
  return "warning: the shared secret from " + source + " is " + std::to_string(secret.size()) +
         " byte(s) long; use at least " + std::to_string(kRecommendedSecretBytes) +
         " random bytes (e.g. `head -c 32 /dev/urandom | base64 > secret`), a short secret can "
         "be guessed";
}

std::string load_shared_secret(const std::string& secret_file, std::ostream& warnings) {
  auto [secret, source] = read_secret(secret_file);
  std::string warning = short_secret_warning(secret, source);
  if (!warning.empty()) warnings << "troupe: " << warning << "\n" << std::flush;
  return secret;
}

std::string load_shared_secret(const std::string& secret_file) {
  return load_shared_secret(secret_file, std::cerr);
}

}  // namespace troupe
