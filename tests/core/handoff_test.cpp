// Handoff: the replica threads' wait for the barrier (spin, then condition variable).
#include <gtest/gtest.h>

#include <thread>

#include "core/handoff.hpp"

using namespace troupe;

TEST(Handoff, DeliversEveryRoundInOrderAcrossThreads) {
  Handoff<int> to_consumer, to_producer;
  constexpr int kRounds = 20000;
  std::thread consumer([&] {
    for (int i = 0; i < kRounds; ++i) {
      auto v = to_consumer.take(std::chrono::seconds(30));
      ASSERT_TRUE(v.has_value());
      ASSERT_EQ(*v, i);
      to_producer.put(i);  // lock-step, like a replica and its barrier
    }
  });
  for (int i = 0; i < kRounds; ++i) {
    to_consumer.put(i);
    auto ack = to_producer.take(std::chrono::seconds(30));
    ASSERT_TRUE(ack.has_value());
    ASSERT_EQ(*ack, i);
  }
  consumer.join();
}

TEST(Handoff, TakeTimesOutWithNothingPut) {
  Handoff<int> h;
  EXPECT_FALSE(h.take(std::chrono::milliseconds(1)).has_value());
  h.put(5);
  EXPECT_EQ(h.take(std::chrono::milliseconds(1)).value_or(-1), 5);
}
