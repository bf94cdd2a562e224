// DatasetIteratorOptions::place (what experimental_fetch_to_device runs for GPU replicas): the
// dataset_iterator actor runs it on its reader thread on every step it reads, ahead of the
// pulls, and a placement that throws fails that step with its message, like a read error. A
// saved state holds the steps read ahead as to_host gives them back (encodable host values).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <caf/all.hpp>

#include "actors/dataset_iterator.hpp"
#include "coordinator/runtime.hpp"
#include "core/data/dataset.hpp"
#include "messages/input_messages.hpp"

namespace troupe {
namespace {

using data::Dataset;

class DatasetIteratorPlacement : public ::testing::Test {
 protected:
  Runtime runtime;

  input_step_msg pull(caf::actor& worker, uint64_t step) {
    caf::scoped_actor self(runtime.system());
    input_step_msg got;
    self->request(worker, std::chrono::seconds(10), input_pull_msg{step})
        .receive([&](input_step_msg& m) { got = std::move(m); },
                 [&](caf::error& e) { ADD_FAILURE() << runtime.system().render(e); });
    return got;
  }

  template <class Msg>
  input_state_msg ask_state(caf::actor& worker, Msg msg) {
    caf::scoped_actor self(runtime.system());
    input_state_msg got;
    self->request(worker, std::chrono::seconds(10), std::move(msg))
        .receive([&](input_state_msg& m) { got = std::move(m); },
                 [&](caf::error& e) { ADD_FAILURE() << runtime.system().render(e); });
    return got;
  }

  // Every element value plus `delta`, in a fresh tensor.
  static Tensor shifted(const Tensor& t, int64_t delta) {
    Tensor moved = t.clone();
    for (int64_t i = 0; i < moved.num_elements(); ++i) moved.data<int64_t>()[i] += delta;
    return moved;
  }
};

TEST_F(DatasetIteratorPlacement, RunsOnTheReaderThreadForEveryStepReadAhead) {
  std::atomic<int> calls{0};
  std::atomic<bool> on_caller_thread{false};
  const auto caller = std::this_thread::get_id();
  DatasetIteratorOptions options;
  options.replicas = 2;
  options.buffer_steps = 2;
  options.place = [&](std::vector<data::Element>& elements) {
    if (std::this_thread::get_id() == caller) on_caller_thread = true;
    ++calls;
    // Where a GPU replica's element would be copied to its device, this one is shifted, so the
    // pulls show that what was placed is what they get.
    for (auto& element : elements)
      for (Tensor& t : element) t = shifted(t, 100);
  };
  caf::actor worker =
      spawn_dataset_iterator(runtime.system(), Dataset::range(0, 8).batch(2), options);
  const input_step_msg first = pull(worker, 1);
  ASSERT_EQ(first.error_code, 0) << first.error_message;
  ASSERT_EQ(first.elements.size(), 2u);
  EXPECT_EQ(first.elements[0].at(0).to_vector<int64_t>(), (std::vector<int64_t>{100, 101}));
  EXPECT_EQ(first.elements[1].at(0).to_vector<int64_t>(), (std::vector<int64_t>{102, 103}));
  const input_step_msg second = pull(worker, 2);
  EXPECT_EQ(second.elements[1].at(0).to_vector<int64_t>(), (std::vector<int64_t>{106, 107}));
  EXPECT_GE(calls.load(), 2);
  EXPECT_FALSE(on_caller_thread.load()) << "placement belongs on the reader thread";
  caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
}

TEST_F(DatasetIteratorPlacement, APlacementThatThrowsFailsItsStepWithTheMessage) {
  DatasetIteratorOptions options;
  options.place = [](std::vector<data::Element>&) {
    throw internal_error("GPU 0 out of memory for the batch");
  };
  caf::actor worker =
      spawn_dataset_iterator(runtime.system(), Dataset::range(0, 4).batch(2), options);
  const input_step_msg step = pull(worker, 1);
  EXPECT_EQ(step.error_code, int32_t(Code::internal));
  EXPECT_NE(step.error_message.find("GPU 0 out of memory for the batch"), std::string::npos)
      << step.error_message;
  caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
}

TEST_F(DatasetIteratorPlacement, ASavedStateHoldsTheStepsReadAheadAsToHostGivesThemBack) {
  DatasetIteratorOptions options;
  options.replicas = 1;
  options.buffer_steps = 2;
  options.place = [](std::vector<data::Element>& elements) {
    for (auto& element : elements)
      for (Tensor& t : element) t = shifted(t, 100);
  };
  // A stand-in for the copy back from a GPU, marked so that the restored steps show it ran.
  options.to_host = [](const Tensor& t) { return shifted(t, 1000); };
  caf::actor placed =
      spawn_dataset_iterator(runtime.system(), Dataset::range(0, 8).batch(2), options);
  ASSERT_EQ(pull(placed, 1).elements.at(0).at(0).to_vector<int64_t>(),
            (std::vector<int64_t>{100, 101}));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // steps 2 and 3 read ahead
  const input_state_msg saved = ask_state(placed, input_save_msg{1});
  ASSERT_EQ(saved.error_code, 0) << saved.error_message;
  caf::anon_send_exit(placed, caf::exit_reason::user_shutdown);

  caf::actor restored = spawn_dataset_iterator(runtime.system(), Dataset::range(0, 8).batch(2),
                                               DatasetIteratorOptions{});
  const input_state_msg reply = ask_state(restored, input_restore_msg{saved.state});
  ASSERT_EQ(reply.error_code, 0) << reply.error_message;
  EXPECT_EQ(pull(restored, 2).elements.at(0).at(0).to_vector<int64_t>(),
            (std::vector<int64_t>{1102, 1103}))
      << "a buffered step, placed then brought back";
  EXPECT_EQ(pull(restored, 3).elements.at(0).at(0).to_vector<int64_t>(),
            (std::vector<int64_t>{1104, 1105}));
  EXPECT_EQ(pull(restored, 4).elements.at(0).at(0).to_vector<int64_t>(),
            (std::vector<int64_t>{6, 7}))
      << "read after the restore, by a worker without placement";
  caf::anon_send_exit(restored, caf::exit_reason::user_shutdown);
}

}  // namespace
}  // namespace troupe
