#pragma once
// Helpers shared by the messages tests.

#include <string>
#include <vector>

#include <caf/error.hpp>

#include "messages/caf_compat.hpp"

namespace troupe::testing {

/// caf::error rendered with its context (the text a user would see).
inline std::string text_of(const caf::error& e) { return caf::to_string(e); }

/// Serializes `value`, failing the test on error.
template <class T>
std::vector<char> encode(T value) {
  std::vector<char> bytes;
  auto err = wire::to_bytes(value, bytes);
  if (err) throw std::runtime_error("encode failed: " + text_of(err));
  return bytes;
}

}  // namespace troupe::testing
