// `troupe bench train --json` reports every GEMM library of the build, the one training runs on,
// and a limit per result (the rates themselves are timings: checked for presence, not value),
// derived as documented: 1 replica from the best single-thread rate, 2 from the rate of two
// threads at once, each beside N x the single-thread limit.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "bench/fma_peak.hpp"
#include "child_process.hpp"
#include "core/json.hpp"
#include "kernels/cpu_gemm.hpp"

using namespace std::chrono_literals;
using troupe::testing::contains;
using troupe::testing::TroupeProcess;

TEST(BenchTrainGemms, JsonNamesEveryLibraryTheTrainingOneAndALimitPerResult) {
  TroupeProcess p({"bench", "train", "--json", "--steps", "1", "--rounds", "1", "--warmup", "0",
                   "--steps-per-execution", "1"});
  ASSERT_EQ(p.wait(120s), 0) << p.err();
  const std::string out = p.out();
  for (troupe::CpuGemm g : troupe::available_cpu_gemms())
    EXPECT_TRUE(contains(out, std::string("{\"library\":\"") + troupe::cpu_gemm_name(g) +
                                  "\",\"sgemm_gflops_batch_256\":"))
        << out;
  EXPECT_TRUE(contains(out, std::string("\"training_gemm\":\"") +
                                troupe::cpu_gemm_name(troupe::default_cpu_gemm()) + "\""))
      << out;
  EXPECT_TRUE(contains(out, "\"onednn_isa\":\"" + troupe::onednn_cpu_isa() + "\"")) << out;
  EXPECT_TRUE(contains(out, "{\"replicas\":1,\"steps_per_execution\":1,")) << out;
  EXPECT_TRUE(contains(out, "{\"replicas\":2,\"steps_per_execution\":1,")) << out;
  EXPECT_TRUE(contains(out, "\"examples_per_s_limit\":")) << out;
}

TEST(BenchTrainGemms, TheTwoCoreLimitIsTwoThreadsAtOnceAndTwiceOneThreadIsReportedBeside) {
  TroupeProcess p({"bench", "train", "--json", "--steps", "2", "--rounds", "1", "--warmup", "0"});
  ASSERT_EQ(p.wait(120s), 0) << p.err();
  const troupe::Json out = troupe::Json::parse(p.out());
  const troupe::Json& limits = *out.find("limits");
  const double flops = limits.find("gemm_flops_per_example")->as_double();
  const double one_thread_example_limit = limits.find("examples_per_s_limit")->as_double();
  const double at_once_gflops = limits.find("sgemm_gflops_2_threads_at_once")->as_double();
  double best_half = 0;  // the best single-thread rate at a 2-replica batch
  for (const auto& g : limits.find("gemms")->items())
    best_half = std::max(best_half, g.find("sgemm_gflops_batch_128")->as_double());
  const auto& results = out.find("results")->items();
  ASSERT_EQ(results.size(), 2u);
  auto field = [](const troupe::Json& r, const char* name) { return r.find(name)->as_double(); };
  // Limits are printed with one decimal, GFLOP/s with three (0.0005 GFLOP/s is 0.61 examples/s
  // at 818,176 FLOPs per example): compare within the rounding.
  const double printed = 0.05 + 0.0005e9 / flops;
  EXPECT_NEAR(field(results[0], "examples_per_s_limit"), one_thread_example_limit, 0.1);
  EXPECT_NEAR(field(results[0], "examples_per_s_limit_n_x_one_core"), one_thread_example_limit,
              0.1);
  EXPECT_NEAR(field(results[1], "examples_per_s_limit"), at_once_gflops * 1e9 / flops, printed);
  EXPECT_NEAR(field(results[1], "examples_per_s_limit_n_x_one_core"), 2 * best_half * 1e9 / flops,
              2 * printed);
  for (const auto& r : results) {
    EXPECT_NEAR(field(r, "ratio_to_limit"),
                field(r, "examples_per_s") / field(r, "examples_per_s_limit"), 1e-3);
    EXPECT_NEAR(field(r, "ratio_to_n_x_one_core"),
                field(r, "examples_per_s") / field(r, "examples_per_s_limit_n_x_one_core"), 1e-3);
  }
  EXPECT_EQ(limits.find("sgemm_2_threads_at_once_library")->text().empty(), false);
}

namespace {
// The widest multiply-add path this CPU runs, as measure_fma_peak names it.
std::string widest_fma_isa() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) return "avx512f";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "avx2+fma";
#endif
  return "sse2";
}
}  // namespace

TEST(BenchTrainGemms, TheMultiplyAddPeakRunsTheWidestVectorsOfThisCpuOnOneAndTwoThreads) {
  const troupe::FmaPeak one = troupe::measure_fma_peak(0.005, 1);
  EXPECT_EQ(one.isa, widest_fma_isa());
  EXPECT_GT(one.gflops, 0);
  const troupe::FmaPeak two = troupe::measure_fma_peak_threads(2, 0.005, 1);
  EXPECT_EQ(two.isa, widest_fma_isa());
  EXPECT_GT(two.gflops, 0);

  TroupeProcess p({"bench", "train", "--json", "--steps", "1", "--rounds", "1", "--warmup", "0",
                   "--steps-per-execution", "1"});
  ASSERT_EQ(p.wait(120s), 0) << p.err();
  const troupe::Json out = troupe::Json::parse(p.out());
  const troupe::Json& limits = *out.find("limits");
  EXPECT_EQ(limits.find("fma_peak_isa")->text(), widest_fma_isa());
  EXPECT_GT(limits.find("fma_peak_gflops")->as_double(), 0);
  EXPECT_GT(limits.find("fma_peak_gflops_2_threads_at_once")->as_double(), 0);
}
