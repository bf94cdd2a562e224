#pragma once
// Task addresses as a ClusterSpec lists them: "host:port".

#include <string>
#include <string_view>

namespace troupe {

/// A parsed "host:port" task address.
struct HostPort {
  std::string host;  ///< a host name, an IPv4 address or a bracketed IPv6 address ("[::1]")
  int port = 0;      ///< 1..65535

  /// Parses `address`; throws invalid_argument "<field>: ..." naming what is wrong.
  static HostPort parse(std::string_view address, std::string_view field);

  /// The address in a form where equal endpoints compare equal (host names are case-insensitive).
  std::string key() const;

  /// The host as sockets take it: an IPv6 address without its brackets ("::1").
  std::string socket_host() const;
};

}  // namespace troupe
