#pragma once
// Shared helpers for the distributed-input tests: a runtime plus a MirroredStrategy per test,
// draining a distributed iterator into plain vectors, temp files of Examples.

#include <gtest/gtest.h>

#include "tests/common/error_of.hpp"

#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "coordinator/distributed_dataset.hpp"
#include "coordinator/mirrored_strategy.hpp"
#include "coordinator/runtime.hpp"
#include "core/data/file_sources.hpp"

namespace troupe::testing {

/// One step: component 0 of every replica's batch as int64 values, replica order.
using StepValues = std::vector<std::vector<int64_t>>;

/// A runtime and an N-replica MirroredStrategy ("CPU:0".."CPU:n-1").
class InputTest : public ::testing::Test {
 protected:
  Runtime runtime;
  std::unique_ptr<MirroredStrategy> strategy;

  MirroredStrategy& make_strategy(int replicas) {
    std::vector<std::string> devices;
    for (int i = 0; i < replicas; ++i) devices.push_back("CPU:" + std::to_string(i));
    strategy = std::make_unique<MirroredStrategy>(runtime.system(), devices);
    return *strategy;
  }

  DistributedDataset distribute(int replicas, const data::Dataset& ds, InputOptions options = {}) {
    return experimental_distribute_dataset(runtime.system(), make_strategy(replicas), ds, options);
  }

  static InputOptions workers(int64_t w, int64_t buffer = 1) {
    InputOptions o;
    o.num_input_workers = w;
    o.experimental_per_replica_buffer_size = buffer;
    return o;
  }

  /// Two epochs of 0..59, shuffled (buffer 16, seed 7), in batches of 8, sharded by data: the
  /// stream the position tests save and restore in the middle of.
  static data::Dataset shuffled_two_epochs() {
    return data::Dataset::range(0, 60)
        .shuffle(16, /*seed=*/7)
        .batch(8)
        .repeat(2)
        .with_auto_shard_policy(data::AutoShardPolicy::data);
  }

  /// 0..count-1 in batches of 2 from a generator that blocks until `opened` is ready: an input
  /// worker over it cannot answer a pull until then.
  static data::Dataset gated_range(std::shared_future<void> opened, int64_t count) {
    data::ElementSpec spec{{DType::int64, {}}};
    return data::Dataset::from_generator(
               [opened, count](int64_t i) -> std::optional<data::Element> {
                 opened.wait();
                 if (i >= count) return std::nullopt;
                 return data::Element{Tensor::from_scalar<int64_t>(i)};
               },
               spec)
        .batch(2);
  }

  /// 0..count-1 in batches of 2, whose map throws invalid_argument("element B is bad") at `bad`.
  static data::Dataset range_failing_at(int64_t count, int64_t bad) {
    return data::Dataset::range(0, count)
        .map([bad](const data::Element& e) -> data::Element {
          if (e[0].scalar<int64_t>() == bad)
            throw invalid_argument("element " + std::to_string(bad) + " is bad");
          return e;
        })
        .batch(2);
  }

  /// Kills `victim` and returns once it is down.
  void kill_and_wait(const caf::actor& victim) {
    caf::scoped_actor self{runtime.system()};
    self->monitor(victim);
    self->send_exit(victim, caf::exit_reason::kill);
    self->receive([](const caf::down_msg&) {});
  }
};

/// Component `c` of one step as int64 vectors, one per replica.
inline StepValues values_of(const std::vector<PerReplica>& step, size_t c = 0) {
  StepValues out;
  for (auto& t : step.at(c).values()) out.push_back(t.to_vector<int64_t>());
  return out;
}

/// Every remaining step of `it` (component 0).
inline std::vector<StepValues> drain(DistributedIterator& it, size_t limit = 100000) {
  std::vector<StepValues> out;
  while (out.size() < limit) {
    auto step = it.get_next_as_optional();
    if (!step) break;
    out.push_back(values_of(*step));
  }
  return out;
}

inline std::vector<StepValues> drain(const DistributedDataset& ds) {
  auto it = ds.make_iterator();
  return drain(it);
}

/// All values of every replica of every step, flattened (order: step, replica, row).
inline std::vector<int64_t> flatten(const std::vector<StepValues>& steps) {
  std::vector<int64_t> out;
  for (auto& s : steps)
    for (auto& r : s) out.insert(out.end(), r.begin(), r.end());
  return out;
}

/// A path in the test's own temporary directory.
inline std::string temp_path(const std::string& name) {
  auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string file =
      std::string("troupe_input_") + info->test_suite_name() + "_" + info->name() + "_" + name;
  for (auto& c : file)
    if (c == '/') c = '_';  // parameterized test names contain slashes
  return ::testing::TempDir() + file;
}

/// A TFRecord file of Examples {"v": int64 value} for values first..first+count-1.
inline std::string write_int_file(const std::string& name, int64_t first, int64_t count) {
  std::vector<data::Example> examples;
  for (int64_t v = first; v < first + count; ++v)
    examples.push_back({{"v", data::Feature::of_int64s({v})}});
  auto path = temp_path(name);
  data::write_examples(path, examples);
  return path;
}

/// tfrecord_dataset over int files written by write_int_file.
inline data::Dataset int_files(std::vector<std::string> files) {
  return data::tfrecord_dataset(std::move(files), {{"v", DType::int64, Shape{}}});
}

}  // namespace troupe::testing

#define EXPECT_ERROR_CONTAINS(stmt, text)                                                         \
  do {                                                                                            \
    std::string troupe_msg_ = ::troupe::testing::error_of([&] { stmt; });                         \
    EXPECT_NE(troupe_msg_.find(text), std::string::npos) << "error was: '" << troupe_msg_ << "'"; \
  } while (0)
