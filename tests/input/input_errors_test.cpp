// Failures reach the caller of get_next through the actor path, naming what is wrong: corrupt
// and missing TFRecord files (file + byte offset), a throwing map function, a dead input worker,
// a silent one (request timeout).
#include <caf/all.hpp>

#include <fstream>
#include <functional>
#include <future>

#include "tests/input/input_test_util.hpp"

namespace troupe::testing {
namespace {

using data::Dataset;

// Flips one byte inside record `index`'s data (records of write_int_file are equally long).
void corrupt_record(const std::string& path, int index, int records) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(0, std::ios::end);
  auto size = int64_t(f.tellg());
  int64_t record_size = size / records;
  int64_t at = record_size * index + 14;  // past the 12-byte header
  f.seekg(at);
  char c = 0;
  f.read(&c, 1);
  c = char(c ^ 0x40);
  f.seekp(at);
  f.write(&c, 1);
}

TEST_F(InputTest, CorruptTFRecordReachesTheCallerNamingFileAndOffset) {
  auto path = write_int_file("corrupt", 0, 10);
  corrupt_record(path, 6, 10);
  auto dist = distribute(2, int_files({path}).batch(2));
  auto it = dist.make_iterator();
  EXPECT_EQ(values_of(it.get_next()), (StepValues{{0}, {1}}));
  EXPECT_EQ(values_of(it.get_next()), (StepValues{{2}, {3}}));
  try {
    while (it.get_next_as_optional()) {
    }
    ADD_FAILURE() << "expected data_loss";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::data_loss);
    std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find("byte offset"), std::string::npos) << what;
  }
  // The failure sticks: the next call reports it again instead of pretending the data ended.
  EXPECT_ERROR_CONTAINS(it.get_next(), "byte offset");
}

TEST_F(InputTest, MissingTFRecordFileIsNotFoundNamingThePath) {
  auto path = temp_path("does_not_exist");
  try {
    auto dist = distribute(2, int_files({path}).batch(2));
    auto it = dist.make_iterator();
    it.get_next();
    ADD_FAILURE() << "expected not_found";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::not_found);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST_F(InputTest, ThrowingMapFunctionReachesTheCaller) {
  auto dist = distribute(2, range_failing_at(8, 5));
  auto it = dist.make_iterator();
  EXPECT_EQ(values_of(it.get_next()), (StepValues{{0}, {1}}));
  // core/data's prefetch(R) reads the failing global batch ahead, so the error may surface one
  // step early; it must surface, and before any element past it.
  EXPECT_ERROR_CONTAINS(
      while (auto step = it.get_next_as_optional()) {
        for (auto& r : values_of(*step))
          for (auto v : r) EXPECT_LT(v, 4);
      },
      "element 5 is bad");
}

TEST_F(InputTest, DeadInputWorkerGivesAnErrorNotAHang) {
  InputOptions o = workers(2);
  o.request_timeout = std::chrono::seconds(30);
  auto ds = Dataset::range(0, 8).batch(2).with_auto_shard_policy(data::AutoShardPolicy::off);
  auto dist = distribute(2, ds, o);
  auto it = dist.make_iterator();
  it.get_next();
  kill_and_wait(it.input_worker_actors().at(1));
  try {
    it.get_next();
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::unavailable) << e.what();
    EXPECT_NE(std::string(e.what()).find("input worker 1 did not answer a pull"), std::string::npos)
        << e.what();
  }
  EXPECT_ERROR_CONTAINS(it.save(), "input worker 1 did not answer save");
}

}  // namespace
}  // namespace troupe::testing

namespace troupe::testing {
namespace {

TEST_F(InputTest, SilentInputWorkerTimesOutInsteadOfHanging) {
  // The generator blocks until the test opens the gate, so the worker cannot answer a pull.
  auto gate = std::make_shared<std::promise<void>>();
  InputOptions o;
  o.request_timeout = std::chrono::milliseconds(50);
  auto dist = distribute(2, gated_range(gate->get_future().share(), 8), o);
  auto it = dist.make_iterator();
  auto expect_timeout = [](const std::function<void()>& pull) {
    try {
      pull();
      ADD_FAILURE() << "expected deadline_exceeded";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::deadline_exceeded) << e.what();
      EXPECT_NE(std::string(e.what()).find("input worker 0 did not answer a pull"),
                std::string::npos)
          << e.what();
    }
  };
  expect_timeout([&] { it.get_next(); });
  expect_timeout([&] { it.get_next_steps(3); });  // a chunk's pulls as well
  gate->set_value();  // let the actor finish so the iterator can exit it
}

}  // namespace
}  // namespace troupe::testing
