// `troupe bench train --json` reports every GEMM library of the build, the one training runs on,
// and a limit per result (the rates themselves are timings: checked for presence, not value).

#include <gtest/gtest.h>

#include <chrono>

#include "child_process.hpp"
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
