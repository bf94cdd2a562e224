#include "net/bind_address.hpp"

#include <arpa/inet.h>

#include <cstring>

namespace troupe {

bool is_loopback_address(const std::string& address) {
  if (address == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, address.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, address.c_str(), &v6) == 1)
    return std::memcmp(&v6, &in6addr_loopback, sizeof v6) == 0;
  return false;  // a host name may resolve to any interface
}

std::string exposed_bind_warning(const std::string& address) {
  if (is_loopback_address(address)) return "";
  const bool every_interface = address.empty() || address == "0.0.0.0" || address == "::";
  return "warning: --bind " + (address.empty() ? std::string("''") : address) + " listens on " +
         (every_interface ? "every network interface" : "a non-loopback address") +
         ": the service is reachable from other hosts, guarded only by the shared secret "
         "(--bind 127.0.0.1 keeps it on this host)";
}

}  // namespace troupe
