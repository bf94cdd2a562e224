// experiment/run/background_writer: jobs run in order on one thread other than the caller's; a
// job's error reaches the caller at the next post or at close, naming what failed.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "core/status.hpp"
#include "experiment/run/background_writer.hpp"

namespace troupe {
namespace {

TEST(BackgroundWriter, RunsJobsInOrderOnItsOwnThread) {
  std::vector<int> order;
  std::thread::id ran_on;
  BackgroundWriter writer;
  for (int i = 0; i < 100; ++i)
    writer.post([&order, &ran_on, i] {
      order.push_back(i);
      ran_on = std::this_thread::get_id();
    });
  writer.close();
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[size_t(i)], i);
  EXPECT_NE(ran_on, std::this_thread::get_id());
}

TEST(BackgroundWriter, AFailedJobsErrorReachesCloseAndLaterJobsDoNotRun) {
  BackgroundWriter writer;
  bool later_ran = false;
  writer.post([] { throw unavailable("cannot write metrics file 'm.csv'"); });
  try {
    writer.post([&later_ran] { later_ran = true; });  // queued, or refused if it failed already
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("m.csv"), std::string::npos) << e.what();
  }
  try {
    writer.close();
    ADD_FAILURE() << "close() did not report the failed write";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write metrics file 'm.csv'"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(later_ran);
}

TEST(BackgroundWriter, AFailedJobsErrorReachesTheNextPost) {
  BackgroundWriter writer;
  writer.post([] { throw unavailable("cannot write event file 'e'"); });
  // Posts succeed until the writer has run the failing job; then the next one throws its error.
  for (;;) {
    try {
      writer.post([] {});
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cannot write event file 'e'"), std::string::npos)
          << e.what();
      break;
    }
  }
}

}  // namespace
}  // namespace troupe
