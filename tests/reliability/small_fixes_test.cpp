// Unit tests of three small guards: the progress bar's loss before any is known, the short-secret
// warning and the non-loopback --bind warning (their processes are in cases.tsv).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "experiment/run/progress.hpp"
#include "net/bind_address.hpp"
#include "net/shared_secret.hpp"

namespace troupe {
namespace {

// What a ProgressReporter on a terminal wrote, through open_memstream.
class TerminalCapture {
 public:
  TerminalCapture() : file_(open_memstream(&buffer_, &size_)) {}
  ~TerminalCapture() {
    if (file_) std::fclose(file_);
    std::free(buffer_);
  }
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    return std::string(buffer_, size_);
  }

 private:
  char* buffer_ = nullptr;
  size_t size_ = 0;
  std::FILE* file_;
};

TEST(ProgressBar, ShowsNoLossBeforeTheFirstLoggedStep) {
  TerminalCapture term;
  ASSERT_TRUE(term.file());
  ProgressReporter progress(term.file(), /*tty=*/true, "");
  ProgressPoint first{3, 100};
  first.accuracy = -1;
  progress.tick(first);
  std::string before = term.text();
  EXPECT_NE(before.find("step 3/100 loss=- "), std::string::npos) << before;
  EXPECT_EQ(before.find("loss=0.000000"), std::string::npos) << before;

  ProgressPoint logged{10, 100, 0.25, 0.5};
  progress.log(logged);
  EXPECT_NE(term.text().find("step 10/100 loss=0.250000 accuracy=0.5000"), std::string::npos)
      << term.text();
  ProgressPoint last{100, 100, 0.25, 0.5};  // the last step is always drawn
  progress.tick(last);
  EXPECT_NE(term.text().find("] step 100/100 loss=0.250000"), std::string::npos) << term.text();
}

TEST(ProgressBar, LogLinesAndFormatAlwaysShowTheLoss) {
  ProgressPoint p{5, 10, 0.125};
  EXPECT_EQ(ProgressReporter::format(p).rfind("step 5/10 loss=0.125000 ", 0), 0u);
  EXPECT_EQ(ProgressReporter::format(p, false).rfind("step 5/10 loss=- ", 0), 0u);
}

TEST(ProgressEta, UsesTheEtaRateWhenGivenTheWindowRateOtherwise) {
  ProgressPoint p{100, 1000, 0.5, -1, /*steps_per_s=*/100, 25600};
  EXPECT_NE(ProgressReporter::format(p).find(" eta=9s"), std::string::npos)
      << ProgressReporter::format(p);
  p.eta_steps_per_s = 900;  // the steady rate: 900 steps left take 1 s, not 9
  EXPECT_NE(ProgressReporter::format(p).find(" eta=1s"), std::string::npos)
      << ProgressReporter::format(p);
  p.steps_per_s = 0;
  p.eta_steps_per_s = 0;
  EXPECT_NE(ProgressReporter::format(p).find(" eta=?"), std::string::npos);
}

TEST(ProgressEta, LeavesTheFirstChunksWarmUpOutOfTheRate) {
  using namespace std::chrono_literals;
  EtaRate rate;
  const auto t0 = EtaRate::Clock::time_point{} + 10s;
  // The first chunk (8 steps) took 0.4 s of warm-up: its own rate is all there is.
  EXPECT_DOUBLE_EQ(rate.after_chunk(8, t0, 20.0), 20.0);
  // 42 more steps in 50 ms: 840 steps/s, whatever the window's rate with the warm-up in it.
  EXPECT_DOUBLE_EQ(rate.after_chunk(50, t0 + 50ms, 125.0), 840.0);
  EXPECT_DOUBLE_EQ(rate.after_chunk(100, t0 + 100ms, 1000.0), 920.0);
  // No time or no steps since the first chunk: the chunk's rate, never a division by zero.
  EtaRate same;
  same.after_chunk(8, t0, 20.0);
  EXPECT_DOUBLE_EQ(same.after_chunk(8, t0, 30.0), 30.0);
}

TEST(SharedSecret, ShortSecretWarningNamesSourceLengthAndMinimum) {
  std::string w = short_secret_warning("x", "TROUPE_SECRET");
  EXPECT_NE(w.find("the shared secret from TROUPE_SECRET is 1 byte(s) long; use at least 16"),
            std::string::npos)
      << w;
  EXPECT_EQ(short_secret_warning(std::string(16, 'k'), "TROUPE_SECRET"), "");
}

TEST(SharedSecret, LoadingAShortSecretWarnsOnTheGivenStream) {
  ::setenv("TROUPE_SECRET", "abc", 1);
  std::ostringstream warnings;
  EXPECT_EQ(load_shared_secret("", warnings), "abc");
  EXPECT_NE(warnings.str().find("troupe: warning: the shared secret from TROUPE_SECRET is 3 "),
            std::string::npos)
      << warnings.str();
  ::setenv("TROUPE_SECRET", "0123456789abcdef0123", 1);
  std::ostringstream none;
  EXPECT_EQ(load_shared_secret("", none), "0123456789abcdef0123");
  EXPECT_EQ(none.str(), "");
  ::unsetenv("TROUPE_SECRET");
}

TEST(BindAddress, LoopbackAddressesAreTheOnlyQuietOnes) {
  for (const char* quiet : {"127.0.0.1", "127.1.2.3", "::1", "localhost"}) {
    EXPECT_TRUE(is_loopback_address(quiet)) << quiet;
    EXPECT_EQ(exposed_bind_warning(quiet), "") << quiet;
  }
  for (const char* open : {"0.0.0.0", "::", "", "10.0.0.1", "192.0.2.1", "fe80::1", "example"})
    EXPECT_FALSE(is_loopback_address(open)) << open;
  EXPECT_NE(exposed_bind_warning("0.0.0.0").find(
                "--bind 0.0.0.0 listens on every network interface: the service is "
                "reachable from other hosts"),
            std::string::npos);
  EXPECT_NE(exposed_bind_warning("10.0.0.1").find("a non-loopback address"), std::string::npos);
}

}  // namespace
}  // namespace troupe
