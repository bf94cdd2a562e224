#include "net/cluster_credentials.hpp"

#include <fcntl.h>
#include <openssl/rand.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/status.hpp"
#include "net/cluster_certs.hpp"

namespace troupe {

ClusterCredentials make_cluster_credentials(const std::vector<std::string>& nodes, bool tls,
                                            const std::string& parent) {
  std::string base = parent.empty() ? std::filesystem::temp_directory_path().string() : parent;
  std::string pattern = base + "/troupe-cluster-XXXXXX";
  if (!::mkdtemp(pattern.data()))
    throw unavailable("cannot create a credentials directory under '" + base +
                      "': " + std::strerror(errno));
  ClusterCredentials c;
  c.dir = pattern;
  try {
    unsigned char bytes[32];
    if (RAND_bytes(bytes, sizeof bytes) != 1)
      throw unavailable("cannot draw a random shared secret (RAND_bytes failed)");
    static const char hex[] = "0123456789abcdef";
    std::string secret;
    for (unsigned char b : bytes) {
      secret.push_back(hex[b >> 4]);
      secret.push_back(hex[b & 15]);
    }
    c.secret_file = c.dir + "/secret";
    int fd = ::open(c.secret_file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || ::write(fd, secret.data(), secret.size()) != ssize_t(secret.size()) ||
        ::close(fd) != 0)
      throw unavailable("cannot write '" + c.secret_file + "': " + std::strerror(errno));
    if (tls) {
      ClusterCertOptions certs;
      certs.dir = c.dir;
      certs.nodes = nodes;
      write_cluster_certs(certs);
      c.tls = true;
    }
  } catch (...) {
    remove_cluster_credentials(c);
    throw;
  }
  return c;
}

void remove_cluster_credentials(const ClusterCredentials& credentials) {
  if (credentials.dir.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(credentials.dir, ignored);
}

std::vector<std::string> credential_args(const ClusterCredentials& credentials,
                                         const std::string& node) {
  std::vector<std::string> args{"--secret-file", credentials.secret_file};
  if (credentials.tls)
    args.insert(args.end(), {"--tls-dir", credentials.dir, "--node", node});
  else
    args.push_back("--no-tls");
  return args;
}

}  // namespace troupe
