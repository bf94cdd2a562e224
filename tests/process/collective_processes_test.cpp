// The ring (and the other collective state machines) between real processes: each rank is a
// `troupe collective-peer` process, connected through CAF's middleman after proving the shared
// secret; the same closed-form checks as in one process (issue: "prove it now with 2 and 3").
#include <gtest/gtest.h>

#include <memory>
#include <sstream>

#include "core/collective/closed_form.hpp"
#include "tests/process/child_process.hpp"

using namespace troupe;
using namespace troupe::testing;

namespace {

constexpr auto kTimeout = std::chrono::seconds(60);

struct RankResult {
  std::string line;
  double checksum = 0;
};

/// Starts `n` ranks, wires them together, returns each rank's RESULT line.
std::vector<RankResult> run_group(int n, const std::string& algo, int64_t count,
                                  std::vector<std::string> extra = {}, int kill_rank = -1) {
  std::vector<std::unique_ptr<ChildProcess>> ranks;
  std::string peers = "PEERS";
  for (int r = 0; r < n; ++r) {
    std::vector<std::string> args{"collective-peer",
                                  "--rank",
                                  std::to_string(r),
                                  "--size",
                                  std::to_string(n),
                                  "--algo",
                                  algo,
                                  "--count",
                                  std::to_string(count),
                                  "--chunk-bytes",
                                  "64KiB",
                                  "--timeout-ms",
                                  "5000"};
    args.insert(args.end(), extra.begin(), extra.end());
    ranks.push_back(
        std::make_unique<ChildProcess>(args, std::vector<std::string>{"TROUPE_SECRET=ring-test"}));
    auto port = ranks.back()->read_line(kTimeout);
    EXPECT_TRUE(port && port->rfind("PORT ", 0) == 0)
        << "rank " << r << ": " << ranks.back()->err();
    peers += " " + (port ? port->substr(5) : std::string("0"));
  }
  if (kill_rank >= 0) {
    ranks[size_t(kill_rank)]->signal(SIGKILL);
    ranks[size_t(kill_rank)]->wait(kTimeout);
  }
  for (int r = 0; r < n; ++r)
    if (r != kill_rank) ranks[size_t(r)]->write_line(peers);
  std::vector<RankResult> results(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    if (r == kill_rank) continue;
    auto line = ranks[size_t(r)]->read_line(kTimeout);
    results[size_t(r)].line = line.value_or("<no line> stderr: " + ranks[size_t(r)]->err());
    std::istringstream in(results[size_t(r)].line);
    std::string tag, status;
    double seconds = 0;
    in >> tag >> status >> seconds >> results[size_t(r)].checksum;
  }
  for (int r = 0; r < n; ++r) {
    if (r == kill_rank) continue;
    ranks[size_t(r)]->write_line("EXIT");
    auto code = ranks[size_t(r)]->wait(kTimeout);
    EXPECT_TRUE(code.has_value()) << "rank " << r << " did not exit";
  }
  return results;
}

void expect_closed_form(int n, const std::string& algo, int64_t count) {
  auto results = run_group(n, algo, count);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(results[size_t(r)].line.rfind("RESULT ok", 0), 0u)
        << "rank " << r << ": " << results[size_t(r)].line;
    EXPECT_DOUBLE_EQ(results[size_t(r)].checksum, closed_form_total(n, count)) << "rank " << r;
  }
}

}  // namespace

TEST(CollectiveProcesses, RingAcrossTwoProcessesMatchesClosedForm) {
  expect_closed_form(2, "ring", 100003);
}

TEST(CollectiveProcesses, RingAcrossThreeProcessesMatchesClosedForm) {
  expect_closed_form(3, "ring", 100003);
}

TEST(CollectiveProcesses, RingAcrossThreeProcessesWithFewerElementsThanRanks) {
  expect_closed_form(3, "ring", 2);
}

TEST(CollectiveProcesses, HierarchicalAndReduceToOneAcrossThreeProcesses) {
  expect_closed_form(3, "hierarchical", 4099);
  expect_closed_form(3, "one_device", 4099);
}

TEST(CollectiveProcesses, DeadRankGivesAnErrorNotAHang) {
  // Rank 1 dies before the group connects: the others must report an error within their timeout.
  auto results = run_group(3, "ring", 1000, {}, /*kill_rank=*/1);
  for (int r : {0, 2})
    EXPECT_EQ(results[size_t(r)].line.rfind("RESULT error", 0), 0u) << results[size_t(r)].line;
}
