// cpu_outer_product_rows (the GEMM behind the all-reduce's outer products) for every GEMM library
// of the build: row blocks of lhs^T rhs agree with a double-precision reference, beta 1 adds to
// what the output holds, an empty inner dimension leaves zeros. Where cpu_outer_product_rows_exact
// says a shape's blocks reproduce each rank's whole product summed in rank order, they do so on
// other values than the probe's too, in both orders for 2 ranks: the verdict depends on the
// shape and the kernel, not on the values. (CTest also runs the kernels suite with oneDNN held
// to AVX2, where the probe may say no: then the all-reduce takes values.)

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/collective/shared_memory_all_reduce.hpp"
#include "kernels/cpu_gemm.hpp"
#include "kernels/registry.hpp"

namespace troupe {
namespace {

std::vector<float> random_values(int64_t count, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(count));
  for (float& f : v) f = float((seed = seed * 22695477u + 1u) >> 9) / 4194304.0f - 1.0f;
  return v;
}

TEST(OuterProductRows, BlocksAgreeWithReferenceAndBetaAdds) {
  const int64_t k = 37, m = 50, n = 29;
  const auto lhs = random_values(k * m, 1), rhs = random_values(k * n, 2);
  for (CpuGemm gemm : available_cpu_gemms()) {
    auto rows = cpu_outer_product_rows(gemm);
    std::vector<float> out(size_t(m * n), 3.0f);
    rows(lhs.data(), rhs.data(), k, m, n, 0, 20, 0.0f, out.data());
    rows(lhs.data(), rhs.data(), k, m, n, 20, m, 0.0f, out.data());
    rows(lhs.data(), rhs.data(), k, m, n, 10, 30, 1.0f, out.data());  // rows 10-29 twice
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double want = 0;
        for (int64_t t = 0; t < k; ++t)
          want += double(lhs[size_t(t * m + i)]) * rhs[size_t(t * n + j)];
        if (i >= 10 && i < 30) want *= 2;
        ASSERT_NEAR(out[size_t(i * n + j)], want, 1e-4)
            << cpu_gemm_name(gemm) << " " << i << "," << j;
      }
    std::vector<float> empty(size_t(m * n), 3.0f);
    rows(lhs.data(), rhs.data(), 0, m, n, 0, m, 0.0f, empty.data());
    for (float v : empty) ASSERT_EQ(v, 0.0f) << cpu_gemm_name(gemm);
  }
}

TEST(OuterProductRows, ExactVerdictHoldsOnOtherValuesInEitherOrder) {
  struct Shape3 {
    int64_t m, n, k;
  };
  for (CpuGemm gemm : available_cpu_gemms())
    for (Shape3 s : {Shape3{784, 256, 64}, Shape3{256, 10, 64}, Shape3{100, 48, 9}}) {
      const bool exact = cpu_outer_product_rows_exact(gemm, s.m, s.n, s.k, 2);
      EXPECT_EQ(exact, cpu_outer_product_rows_exact(gemm, s.m, s.n, s.k, 2));
      RecordProperty(std::string(cpu_gemm_name(gemm)) + "_" + std::to_string(s.m) + "x" +
                         std::to_string(s.n) + "x" + std::to_string(s.k) + "_exact",
                     exact);
      if (!exact) continue;
      auto rows = cpu_outer_product_rows(gemm);
      const auto l0 = random_values(s.k * s.m, 7), r0 = random_values(s.k * s.n, 8);
      const auto l1 = random_values(s.k * s.m, 9), r1 = random_values(s.k * s.n, 10);
      std::vector<float> whole0(size_t(s.m * s.n)), whole1(whole0.size()), want(whole0.size());
      rows(l0.data(), r0.data(), s.k, s.m, s.n, 0, s.m, 0.0f, whole0.data());
      rows(l1.data(), r1.data(), s.k, s.m, s.n, 0, s.m, 0.0f, whole1.data());
      for (size_t i = 0; i < want.size(); ++i) want[i] = whole0[i] + whole1[i];
      const int64_t block = outer_product_block_rows(s.m, s.n);
      for (bool reversed : {false, true}) {
        std::vector<float> got(want.size());
        for (int64_t b = 0; b < s.m; b += block) {
          const int64_t e = std::min(s.m, b + block);
          const auto& [la, ra] = reversed ? std::tie(l1, r1) : std::tie(l0, r0);
          const auto& [lb, rb] = reversed ? std::tie(l0, r0) : std::tie(l1, r1);
          rows(la.data(), ra.data(), s.k, s.m, s.n, b, e, 0.0f, got.data());
          rows(lb.data(), rb.data(), s.k, s.m, s.n, b, e, 1.0f, got.data());
        }
        EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0)
            << cpu_gemm_name(gemm) << " [" << s.m << ", " << s.n << ", " << s.k << "] "
            << (reversed ? "rank 1 first" : "rank 0 first");
      }
    }
}

TEST(OuterProductRows, DefaultRegistryNamesItsGemm) {
  KernelRegistry registry = make_cpu_registry();
  ASSERT_TRUE(registry.cpu_float32_gemm().has_value());
  EXPECT_EQ(*registry.cpu_float32_gemm(), default_cpu_gemm());
  EXPECT_FALSE(KernelRegistry().cpu_float32_gemm().has_value());
}

}  // namespace
}  // namespace troupe
