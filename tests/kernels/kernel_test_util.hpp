#pragma once
// Helpers shared by the kernel tests: a CPU registry per test, double views of tensors, and an
// assertion that an expression throws troupe::Error whose message contains given text.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "kernels/ops.hpp"
#include "kernels/registry.hpp"

namespace troupe::testing {

/// Fixture owning a CPU registry and Ops over it.
class KernelTest : public ::testing::Test {
 protected:
  KernelRegistry registry = make_cpu_registry();
  Ops ops{registry};
};

/// Elements of a float32/float64/int tensor widened to double.
inline std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> out(size_t(t.num_elements()));
  dispatch_dtype(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* p = t.data<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = double(p[i]);
  });
  return out;
}

/// Expects every element of `actual` within `tol` (absolute + relative) of `expected`.
inline void expect_all_near(const std::vector<double>& expected, const Tensor& actual, double tol) {
  auto got = as_doubles(actual);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], tol * (1.0 + std::abs(expected[i]))) << "element " << i;
}

/// A tensor handle that claims GPU memory (host bytes behind it): enough to test device checks.
inline Tensor fake_gpu_tensor(DType dtype, Shape shape) {
  Tensor host(dtype, shape);
  auto buffer = std::make_shared<Buffer>(host.raw_data(), host.byte_size(), MemoryKind::gpu, 0,
                                         [keep = host.buffer()](void*) {});
  return Tensor(dtype, std::move(shape), buffer);
}

}  // namespace troupe::testing

/// Expects `stmt` to throw troupe::Error with code `code` and `text` in its message.
#define EXPECT_TROUPE_ERROR(stmt, expected_code, expected_text)                     \
  do {                                                                              \
    try {                                                                           \
      stmt;                                                                         \
      ADD_FAILURE() << "expected troupe::Error from " #stmt;                        \
    } catch (const ::troupe::Error& e) {                                            \
      EXPECT_EQ(e.code(), expected_code) << e.what();                               \
      EXPECT_NE(std::string(e.what()).find(expected_text), std::string::npos)       \
          << "message: " << e.what() << "\nexpected to contain: " << expected_text; \
    }                                                                               \
  } while (0)
