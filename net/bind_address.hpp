#pragma once
// Which listen addresses keep a node on this host. A node bound anywhere else answers every
// host that can route to it, with only the shared secret between them and the tensor service.

#include <string>

namespace troupe {

/// True for addresses only this host can reach: 127.0.0.0/8, ::1 and "localhost".
bool is_loopback_address(const std::string& address);

/// "" for a loopback `address`; otherwise a one-line warning that a service listening on it is
/// reachable from other hosts ("" and 0.0.0.0 / :: name every interface).
std::string exposed_bind_warning(const std::string& address);

}  // namespace troupe
