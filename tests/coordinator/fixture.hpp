#pragma once
// Shared helpers for strategy tests: one actor system per test, short timeouts, small tensors.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "coordinator/context.hpp"
#include "coordinator/mirrored_strategy.hpp"
#include "coordinator/runtime.hpp"

namespace troupe::testing {

/// A fresh runtime per test; strategies are created on it and destroyed before it.
class StrategyTest : public ::testing::Test {
 protected:
  Runtime runtime;

  /// n CPU replicas ("CPU:0".."CPU:n-1").
  static std::vector<std::string> cpus(int n) {
    std::vector<std::string> d;
    for (int i = 0; i < n; ++i) d.push_back("CPU:" + std::to_string(i));
    return d;
  }
  static MirroredOptions with_timeouts(std::chrono::milliseconds merge,
                                       std::optional<CrossDeviceOpKind> op = std::nullopt) {
    MirroredOptions o;
    o.cross_device_ops = op;
    o.timeouts.merge_timeout = merge;
    o.timeouts.step_timeout = std::chrono::seconds(60);
    return o;
  }
};

inline Tensor scalar(float v) { return Tensor::from_scalar<float>(v); }
inline Tensor vec(std::vector<float> v) {
  return Tensor::from_vector<float>({int64_t(v.size())}, v);
}
inline float value_of(const Tensor& t) { return t.scalar<float>(); }

/// Asserts that `body` throws troupe::Error whose message contains every fragment.
template <class Body>
void expect_error(Body&& body, std::vector<std::string> fragments) {
  try {
    body();
    ADD_FAILURE() << "expected an error containing '" << fragments.at(0) << "'";
  } catch (const Error& e) {
    for (auto& f : fragments)
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos)
          << "missing '" << f << "' in: " << e.what();
  }
}

}  // namespace troupe::testing
