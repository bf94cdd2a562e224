// Usage errors of the smaller commands name the option and the problem as the user typed them.
#include <gtest/gtest.h>

#include "tests/process/child_process.hpp"

using namespace std::chrono_literals;
using troupe::testing::contains;
using troupe::testing::TroupeProcess;

TEST(CliUsageErrors, NegativeCountNamesTheOptionOnce) {
  TroupeProcess p({"collective-peer", "--rank", "0", "--size", "2", "--count", "-5"});
  EXPECT_EQ(p.wait(60s), 2) << p.err();
  EXPECT_TRUE(contains(p.err(), "--count: '-5' is not a byte size")) << p.err();
  EXPECT_FALSE(contains(p.err(), "----count")) << p.err();
}

TEST(CliUsageErrors, AllreduceSizeBelowOneElementIsRefused) {
  TroupeProcess p({"bench", "allreduce", "--sizes", "3"});
  EXPECT_EQ(p.wait(60s), 2) << p.out() << p.err();
  EXPECT_TRUE(contains(p.err(), "--sizes: '3' is 3 byte(s), less than one float32 element"))
      << p.err();
  EXPECT_FALSE(contains(p.out(), "float32")) << "a row was printed: " << p.out();
}

TEST(CliUsageErrors, InspectWithoutCheckpointShowsItsUsage) {
  TroupeProcess p({"inspect"});
  EXPECT_EQ(p.wait(60s), 2) << p.err();
  EXPECT_TRUE(contains(p.err(), "missing CHECKPOINT (usage: troupe inspect CHECKPOINT")) << p.err();
  EXPECT_FALSE(contains(p.err(), "--checkpoint")) << p.err();
}

TEST(CliUsageErrors, UnknownOrGpuOnlyAlgorithmIsNamed) {
  TroupeProcess unknown({"collective-peer", "--rank", "0", "--size", "2", "--algo", "carrier"});
  EXPECT_EQ(unknown.wait(60s), 2);
  EXPECT_TRUE(contains(unknown.err(),
                       "--algo must be one of ring, one_device, hierarchical, "
                       "nccl, got 'carrier'"))
      << unknown.err();
  TroupeProcess nccl({"bench", "allreduce", "--algo", "nccl"});
  EXPECT_EQ(nccl.wait(60s), 2);
  EXPECT_TRUE(contains(nccl.err(), "--algo nccl runs on GPUs through NCCL")) << nccl.err();
}

TEST(CliUsageErrors, TheRendezvousNeedsRanksOnThisHost) {
  TroupeProcess peer({"collective-peer", "--rank", "0", "--size", "2", "--small-bytes", "4KiB",
                      "--transport", "tcp"});
  EXPECT_EQ(peer.wait(60s), 2);
  EXPECT_TRUE(contains(peer.err(),
                       "--small-bytes needs --transport direct (ranks on this host), "
                       "got 'tcp'"))
      << peer.err();
  TroupeProcess bench({"bench", "allreduce", "--small-bytes", "4KiB"});
  EXPECT_EQ(bench.wait(60s), 2);
  EXPECT_TRUE(
      contains(bench.err(), "--small-bytes applies only with --processes and --transport direct"))
      << bench.err();
}

TEST(CliUsageErrors, LargeAllReducesInSharedMemoryNeedRanksOnThisHostAndWholePieces) {
  TroupeProcess peer({"collective-peer", "--rank", "0", "--size", "2", "--large-bytes", "1MiB",
                      "--transport", "middleman"});
  EXPECT_EQ(peer.wait(60s), 2);
  EXPECT_TRUE(contains(peer.err(),
                       "--large-bytes needs --transport direct (ranks on this host), "
                       "got 'middleman'"))
      << peer.err();
  TroupeProcess tiny({"collective-peer", "--rank", "0", "--size", "2", "--large-bytes", "1MiB",
                      "--chunk-bytes", "16"});
  EXPECT_EQ(tiny.wait(60s), 2);
  EXPECT_TRUE(contains(tiny.err(),
                       "--large-bytes needs --chunk-bytes of at least 64 (the "
                       "pieces), got 16"))
      << tiny.err();
  TroupeProcess bench({"bench", "allreduce", "--large-bytes", "1MiB"});
  EXPECT_EQ(bench.wait(60s), 2);
  EXPECT_TRUE(
      contains(bench.err(), "--large-bytes applies only with --processes and --transport direct"))
      << bench.err();
}

TEST(CliUsageErrors, CrossMemoryIsAutoOnOrOffAndNeedsRanksOnThisHost) {
  TroupeProcess peer({"collective-peer", "--rank", "0", "--size", "2", "--cross-memory", "yes"});
  EXPECT_EQ(peer.wait(60s), 2);
  EXPECT_TRUE(contains(peer.err(), "--cross-memory must be auto, on or off, got 'yes'"))
      << peer.err();
  TroupeProcess bench({"bench", "allreduce", "--cross-memory", "off"});
  EXPECT_EQ(bench.wait(60s), 2);
  EXPECT_TRUE(
      contains(bench.err(), "--cross-memory applies only with --processes and --transport direct"))
      << bench.err();
  TroupeProcess odd({"bench", "allreduce", "--processes", "2", "--cross-memory", "maybe"});
  EXPECT_EQ(odd.wait(60s), 2);
  EXPECT_TRUE(contains(odd.err(), "--cross-memory must be auto, on or off, got 'maybe'"))
      << odd.err();
}
