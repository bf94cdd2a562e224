#pragma once
// Fresh credentials for a cluster that one command starts (`troupe launch`): a private directory
// holding a random shared secret and a cluster CA with one certificate per node. Nothing in it is
// reused: each launch makes its own, so a process of another launch cannot join.

#include <string>
#include <vector>

namespace troupe {

struct ClusterCredentials {
  std::string dir;          ///< mode 0700, removed by remove_cluster_credentials
  std::string secret_file;  ///< 64 hex digits (32 random bytes), mode 0600
  bool tls = false;         ///< certificates written: <dir>/ca.pem, <dir>/<node>.pem/.key
};

/// Creates a new directory under `parent` (the system's temporary directory when empty) with a
/// random secret and, when `tls`, certificates for `nodes`. Throws unavailable naming the
/// directory or file that could not be written.
ClusterCredentials make_cluster_credentials(const std::vector<std::string>& nodes, bool tls,
                                            const std::string& parent = "");

/// Removes the directory and everything in it (errors ignored: it is temporary).
void remove_cluster_credentials(const ClusterCredentials& credentials);

/// The `troupe server` options by which task `node` proves it belongs to the cluster: the
/// secret file, and its certificate (`--tls-dir`, `--node`) or `--no-tls`.
std::vector<std::string> credential_args(const ClusterCredentials& credentials,
                                         const std::string& node);

}  // namespace troupe
