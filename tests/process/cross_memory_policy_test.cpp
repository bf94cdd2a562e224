// The choice between the cross-memory all-reduce and the rendezvous pieces
// (coordinator/cluster/cross_memory_policy.hpp): the flag's three values and its errors, and the
// rates the automatic choice rests on, measured in this process and stated in the log's text.
#include <gtest/gtest.h>

#include <string>

#include "coordinator/cluster/cross_memory_policy.hpp"
#include "core/status.hpp"

namespace troupe {
namespace {

TEST(CrossMemoryPolicy, TheFlagTakesAutoOnOrOffAndNamesAnythingElse) {
  EXPECT_EQ(parse_cross_memory_policy("auto", "--cross-memory"), CrossMemoryPolicy::automatic);
  EXPECT_EQ(parse_cross_memory_policy("on", "--cross-memory"), CrossMemoryPolicy::on);
  EXPECT_EQ(parse_cross_memory_policy("off", "--cross-memory"), CrossMemoryPolicy::off);
  try {
    parse_cross_memory_policy("On", "--cross-memory");
    FAIL() << "'On' was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument);
    EXPECT_EQ(std::string(e.what()), "--cross-memory must be auto, on or off, got 'On'");
  }
}

TEST(CrossMemoryPolicy, AutoFollowsTheRatesMeasuredHereAndOnAndOffDoNot) {
  const CrossMemoryRates& rates = cross_memory_rates();
  EXPECT_EQ(&rates, &cross_memory_rates()) << "measured once per process";
  ASSERT_GT(rates.readv_gbps, 0.0) << "process_vm_readv of this process's own memory failed";
  ASSERT_GT(rates.memcpy_gbps, 0.0);
  // It pays while process_vm_readv takes at most kCrossMemoryMaxSlowdown x memcpy's time.
  EXPECT_EQ(rates.pays, rates.readv_gbps * kCrossMemoryMaxSlowdown >= rates.memcpy_gbps * 0.999999)
      << rates.readv_gbps << " vs " << rates.memcpy_gbps;
  EXPECT_TRUE(cross_memory_allowed(CrossMemoryPolicy::on));
  EXPECT_FALSE(cross_memory_allowed(CrossMemoryPolicy::off));
  EXPECT_EQ(cross_memory_allowed(CrossMemoryPolicy::automatic), rates.pays);
}

TEST(CrossMemoryPolicy, TheLogStatesTheMeasuredRatesAndTheChoice) {
  EXPECT_EQ(describe_cross_memory(CrossMemoryPolicy::on), "on");
  EXPECT_EQ(describe_cross_memory(CrossMemoryPolicy::off), "off");
  const std::string text = describe_cross_memory(CrossMemoryPolicy::automatic);
  EXPECT_EQ(text.rfind("auto: process_vm_readv ", 0), 0u) << text;
  EXPECT_NE(text.find(" GB/s, memcpy "), std::string::npos) << text;
  const char* choice =
      cross_memory_rates().pays ? "here, so the cross-memory path" : "here, so the pieces";
  EXPECT_NE(text.find(choice), std::string::npos) << text;
}

TEST(CrossMemoryPolicy, AProcessThatMayNotReadItselfIsNamedAsSuchAndTakesThePieces) {
  const CrossMemoryRates failed;  // what measuring gives where process_vm_readv fails
  EXPECT_FALSE(failed.pays);
  EXPECT_EQ(describe_cross_memory(CrossMemoryPolicy::automatic, failed),
            "auto: process_vm_readv is not permitted here, so the pieces");
  CrossMemoryRates fast;
  fast.readv_gbps = 20;
  fast.memcpy_gbps = 30;
  fast.pays = true;
  EXPECT_EQ(describe_cross_memory(CrossMemoryPolicy::automatic, fast),
            "auto: process_vm_readv 20.0 GB/s, memcpy 30.0 GB/s here, so the cross-memory path");
  EXPECT_EQ(describe_cross_memory(CrossMemoryPolicy::off, fast), "off");
}

}  // namespace
}  // namespace troupe
