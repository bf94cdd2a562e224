#include "core/host_port.hpp"

#include <cctype>

#include "core/status.hpp"

namespace troupe {
namespace {

bool is_host_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
}

bool is_ipv6_char(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.';
}

}  // namespace

HostPort HostPort::parse(std::string_view address, std::string_view field) {
  auto fail = [&](const std::string& problem) {
    return invalid_argument(std::string(field) + ": address \"" + std::string(address) + "\" " +
                            problem);
  };
  // The port follows the last ':'; an IPv6 host must be bracketed so its colons are not read
  // as the port separator (gRPC's and TF's convention).
  size_t colon = address.rfind(':');
  if (address.empty()) throw fail("is empty; expected host:port");
  if (colon == std::string_view::npos) throw fail("has no port; expected host:port");
  std::string_view host = address.substr(0, colon);
  std::string_view port = address.substr(colon + 1);
  if (host.empty()) throw fail("has no host; expected host:port");
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') throw fail("has an unterminated IPv6 host");
    for (char c : host.substr(1, host.size() - 2))
      if (!is_ipv6_char(c)) throw fail("has an invalid IPv6 host");
  } else {
    for (char c : host) {
      if (c == ':') throw fail("has more than one ':'; write an IPv6 host in brackets");
      if (!is_host_char(c)) throw fail("has an invalid character in the host");
    }
  }
  if (port.empty()) throw fail("has no port; expected host:port");
  if (port.size() > 5) throw fail("has a port outside 1-65535");
  int value = 0;
  for (char c : port) {
    if (!std::isdigit(static_cast<unsigned char>(c))) throw fail("has a port that is not a number");
    value = value * 10 + (c - '0');
  }
  if (value < 1 || value > 65535) throw fail("has a port outside 1-65535");
  return {std::string(host), value};
}

std::string HostPort::key() const {
  std::string lower = host;
  for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  return lower + ":" + std::to_string(port);
}

std::string HostPort::socket_host() const {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    return host.substr(1, host.size() - 2);
  return host;
}

}  // namespace troupe
