#pragma once
// A typed error reply: a troupe::Code plus a message naming the problem, for replies that must
// carry a troupe Status across actors (CAF errors lose the code category).

#include <cstdint>
#include <string>

#include "core/status.hpp"
#include "messages/caf_compat.hpp"

namespace troupe {

/// troupe::Status as a message.
struct error_reply {
  int32_t code = 0;  ///< a troupe::Code value
  std::string message;

  static error_reply from_status(const Status& s) { return {int32_t(s.code()), s.message()}; }
  Status to_status() const { return {static_cast<Code>(code), message}; }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, error_reply& x) {
  return f(caf::meta::type_name("error_reply"), x.code, x.message);
}

}  // namespace troupe
