#pragma once
// The fixture of the parameter_server launch tests (`troupe launch -n W --ps P`): a fresh
// directory per test holding 4000 ratings of 30 users x 20 items by hidden rank-2 factors in two
// TFRecord files (worker w reads file w; ratings_data() is the experiment's `data:` section),
// and readers of a launch's output.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <map>
#include <regex>
#include <string>

#include "core/data/tfrecord.hpp"
#include "tests/common/hidden_factor_ratings.hpp"
#include "tests/process/child_process.hpp"

namespace troupe::testing {

class PsRatingsLaunchTest : public ::testing::Test {
 protected:
  // `prefix` names the test's directory under the system's temporary one.
  explicit PsRatingsLaunchTest(std::string prefix) : prefix_(std::move(prefix)) {}

  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           (prefix_ + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    write_ratings();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string run_dir() const { return (dir_ / "run").string(); }

  // The experiment's `data:` section reading the two files, batches of 64, shuffled.
  std::string ratings_data() const {
    return "data: {kind: tfrecord, files: [" + (dir_ / "ratings-0.tfrecord").string() + ", " +
           (dir_ / "ratings-1.tfrecord").string() +
           "], features: {ids: {dtype: int64, shape: [2]}, rating: {dtype: float32}}, "
           "label: rating, global_batch: 64, shuffle: true}\n";
  }

  // The rest of a launch's output after `text`: stdout, then its stderr; its exit code in `code`.
  static std::string finish(TroupeProcess& p, std::string text, int* code) {
    while (auto line = p.read_line(std::chrono::seconds(300))) text += *line + "\n";
    *code = p.wait(std::chrono::seconds(60)).value_or(-1);
    return text + p.out() + "\n--- stderr ---\n" + p.err();
  }

  // Reads the launch's lines until `until` returns true; the pid of every task started so far
  // is in `pids` by task name ("/job:ps/task:0").
  static void read_until(TroupeProcess& launch, std::string& text, std::map<std::string, int>& pids,
                         const std::function<bool()>& until) {
    const std::regex started(R"(started (/job:\w+/task:\d+) \(pid (\d+)\))");
    while (!until()) {
      auto line = launch.read_line(std::chrono::seconds(240));
      ASSERT_TRUE(line) << text << launch.err();
      text += *line + "\n";
      std::smatch m;
      if (std::regex_search(*line, m, started)) pids[m[1]] = std::stoi(m[2]);
    }
  }

  // The coordinator's final loss ("finished at step N: loss X"), -1 when there is none.
  static double final_loss(const std::string& out) {
    std::smatch m;
    if (!std::regex_search(out, m, std::regex(R"(finished at step \d+: loss ([0-9.e+-]+))")))
      return -1;
    return std::stod(m[1]);
  }

  // The step ids the shards applied, as the coordinator reports them at the end (-1: none).
  static int64_t applied_at_shards(const std::string& out) {
    std::smatch m;
    if (!std::regex_search(out, m, std::regex(R"((\d+) update\(s\) applied at the shards)")))
      return -1;
    return std::stoll(m[1]);
  }

  std::filesystem::path dir_;

 private:
  void write_ratings() {
    data::TFRecordWriter even((dir_ / "ratings-0.tfrecord").string());
    data::TFRecordWriter odd((dir_ / "ratings-1.tfrecord").string());
    hidden_factor_ratings(
        [&](int n, const std::string& record) { (n % 2 ? odd : even).write(record); });
    even.close();
    odd.close();
  }

  std::string prefix_;
};

}  // namespace troupe::testing
