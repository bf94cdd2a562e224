#pragma once
// Shared by every test area: the message of the troupe::Error a call throws.

#include <string>

#include "core/status.hpp"

namespace troupe::testing {

/// Runs fn and returns the troupe::Error message it throws ("" when it does not throw).
template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace troupe::testing
