// StepExchange: how run() hands steps to replica threads and gathers their reports.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "core/step_exchange.hpp"

using namespace troupe;

namespace {

struct Order {
  uint64_t step = 0;
  int value = 0;
};

// Replica threads that answer each order with value * 10 (or an error for negative values),
// until the exchange closes.
struct Replicas {
  explicit Replicas(StepExchange<Order>& exchange) : exchange(exchange) {
    for (int r = 0; r < exchange.size(); ++r)
      threads.emplace_back([this, r] {
        while (auto order = this->exchange.next(r)) {
          StepReport report{order->step, {}, {}};
          if (order->value < 0)
            report.status = Status(Code::invalid_argument, "negative " + std::to_string(r));
          else
            report.outputs = {Tensor::from_scalar<int32_t>(order->value * 10)};
          this->exchange.report(r, std::move(report));
        }
        ++ended;
      });
  }
  ~Replicas() {
    exchange.close();
    for (auto& t : threads) t.join();
  }
  StepExchange<Order>& exchange;
  std::vector<std::thread> threads;
  std::atomic<int> ended{0};
};

}  // namespace

TEST(StepExchange, EveryReplicaAnswersEveryStepAcrossManySteps) {
  for (int n : {1, 2, 3, 4, 7}) {
    StepExchange<Order> exchange(n);
    Replicas replicas(exchange);
    for (uint64_t step = 1; step <= 2000; ++step) {
      exchange.open(step);
      for (int r = 0; r < n; ++r) exchange.post(r, {step, int(step) + r});
      auto reports = exchange.collect(std::chrono::seconds(30));
      ASSERT_EQ(reports.size(), size_t(n));
      for (int r = 0; r < n; ++r) {
        ASSERT_TRUE(reports[size_t(r)]) << "replica " << r << " step " << step;
        ASSERT_EQ(reports[size_t(r)]->step, step);
        ASSERT_EQ(reports[size_t(r)]->outputs.at(0).scalar<int32_t>(), (int(step) + r) * 10);
      }
    }
  }
}

TEST(StepExchange, ErrorsArriveAsReportsWithTheirStatus) {
  StepExchange<Order> exchange(2);
  Replicas replicas(exchange);
  exchange.open(1);
  exchange.post(0, {1, 5});
  exchange.post(1, {1, -1});
  auto reports = exchange.collect(std::chrono::seconds(30));
  ASSERT_TRUE(reports[0] && reports[1]);
  EXPECT_TRUE(reports[0]->status.ok());
  EXPECT_EQ(reports[1]->status.code(), Code::invalid_argument);
  EXPECT_EQ(reports[1]->status.message(), "negative 1");
}

TEST(StepExchange, AReplicaThatDoesNotReportInTimeIsMissingAndItsLateReportIsDropped) {
  StepExchange<Order> exchange(2);
  exchange.open(1);
  exchange.report(0, {1, {Tensor::from_scalar<int32_t>(1)}, {}});
  auto reports = exchange.collect(std::chrono::milliseconds(20));
  ASSERT_TRUE(reports[0]);
  EXPECT_FALSE(reports[1]);  // never reported: the caller names it

  exchange.open(2);
  exchange.report(1, {1, {Tensor::from_scalar<int32_t>(99)}, {}});  // late answer of step 1
  exchange.report(0, {2, {Tensor::from_scalar<int32_t>(2)}, {}});
  exchange.report(1, {2, {Tensor::from_scalar<int32_t>(3)}, {}});
  reports = exchange.collect(std::chrono::seconds(30));
  ASSERT_TRUE(reports[0] && reports[1]);
  EXPECT_EQ(reports[1]->outputs.at(0).scalar<int32_t>(), 3);
}

TEST(StepExchange, ASecondReportOfTheSameStepDoesNotReplaceTheFirst) {
  StepExchange<Order> exchange(1);
  exchange.open(7);
  exchange.report(0, {7, {Tensor::from_scalar<int32_t>(1)}, {}});
  exchange.report(0, {7, {Tensor::from_scalar<int32_t>(2)}, {}});
  auto reports = exchange.collect(std::chrono::seconds(1));
  ASSERT_TRUE(reports[0]);
  EXPECT_EQ(reports[0]->outputs.at(0).scalar<int32_t>(), 1);
}

TEST(StepExchange, CloseEndsIdleReplicasAndReplicasFinishingAStep) {
  StepExchange<Order> exchange(3);
  {
    Replicas replicas(exchange);
    exchange.open(1);
    for (int r = 0; r < 3; ++r) exchange.post(r, {1, r});
    ASSERT_TRUE(exchange.collect(std::chrono::seconds(30))[2]);
  }  // ~Replicas closes and joins: a hang here is the failure
  SUCCEED();
}
