#include "actors/replica.hpp"

#include <new>

#include <caf/all.hpp>

#include "core/collective/algorithm_choice.hpp"
#include "core/float_mode.hpp"
#include "kernels/host_accumulate.hpp"
#include "messages/collective_messages.hpp"
#include "messages/error_channel.hpp"
#include "messages/replica_messages.hpp"
#include "messages/tensor_msg.hpp"
#include "messages/timed_request.hpp"

namespace troupe {
namespace {

/// merge_call as seen from inside the step function of one replica.
class BarrierPort final : public MergePort {
 public:
  BarrierPort(caf::blocking_actor* self, const caf::actor& barrier, const caf::actor& peer,
              ReplicaGroupShared& shared, int replica, uint64_t step)
      : self_(self),
        barrier_(barrier),
        peer_(peer),
        shared_(shared),
        replica_(replica),
        step_(step) {}

  std::vector<Tensor> merge(const std::string& tag, std::vector<Tensor> args,
                            MergeRunner runner) override {
    uint32_t call = calls_++;
    MergeTurn turn =
        shared_.rounds.arrive(replica_, step_, call, tag, std::move(args), std::move(runner));
    if (turn.arm_timer) self_->send(barrier_, merge_timeout_msg{});
    if (turn.run_merge) return run_merge(std::move(turn), call);
    // The barrier times the round; the margin only guards against a dead barrier.
    const auto deadline =
        std::chrono::steady_clock::now() + shared_.merge_timeout + std::chrono::seconds(5);
    auto outcome = shared_.slots[size_t(replica_)].take_answer(step_, call, deadline);
    if (!outcome)
      throw deadline_exceeded("replica " + std::to_string(replica_) +
                              ": the merge_call barrier did not answer (step " +
                              std::to_string(step_) + ", merge_call " + std::to_string(call) + ")");
    outcome->status.throw_if_error();
    return std::move(outcome->values);
  }

  // The last replica to arrive: runs replica 0's merge function here, on a replica thread (a
  // merge may block on a GPU or in user code: it must not hold a CAF scheduler thread), and
  // answers the others.
  std::vector<Tensor> run_merge(MergeTurn turn, uint32_t call) {
    std::vector<std::vector<Tensor>> results;
    Status failure;
    try {
      if (!turn.runner)
        throw internal_error("merge_call round at step " + std::to_string(step_) +
                             " completed without replica 0's merge function");
      results = turn.runner(std::move(turn.args));
      if (results.size() != size_t(shared_.size()))
        throw internal_error("merge runner returned " + std::to_string(results.size()) +
                             " results for " + std::to_string(shared_.size()) + " replicas");
    } catch (const Error& e) {
      failure = Status(e.code(),
                       "merge function failed at step " + std::to_string(step_) + ": " + e.what());
    } catch (const std::exception& e) {
      failure = Status(Code::internal,
                       "merge function failed at step " + std::to_string(step_) + ": " + e.what());
    }
    turn.runner = nullptr;  // drops what it captured from replica 0's frame before it resumes
    for (int r : turn.replicas) {
      if (r == replica_) continue;
      MergeOutcome answer;
      answer.status = failure;
      answer.step = step_;
      answer.call = call;
      if (failure.ok()) answer.values = std::move(results[size_t(r)]);
      shared_.slots[size_t(r)].reply.put(std::move(answer));
    }
    failure.throw_if_error();
    return std::move(results[size_t(replica_)]);
  }

  Tensor collective(const CollectiveCall& call, const Tensor& input) override {
    const int64_t instance = next_instance();
    collective_start_msg start{
        instance, call.kind, int32_t(shared_.size()), call.chunk_bytes, 0, call.tensor_index,
        input,    Tensor{}};
    // The ring's ranks share this group's memory: one result buffer for all of them means
    // no all-gather copies (CollectiveSpec::shared_output).
    if (call.kind == int(CrossDeviceOpKind::collective_all_reduce))
      start.shared_output =
          shared_.collective_output(step_, instance, input.dtype(), input.num_elements());
    const Tensor shared_output = start.shared_output;
    Tensor result;
    std::string failure;
    timed_request(self_, peer_, shared_.merge_timeout, std::move(start))
        .receive([&](tensor_msg& reply) { result = std::move(reply.tensor); },
                 [&](caf::error& e) { failure = to_status(e).message(); });
    if (!failure.empty()) throw failed(instance, failure);
    // Every rank got the group's one output buffer: a replica writing into its result must
    // copy first instead of changing the others' (Tensor::raw_data copy-on-write).
    if (shared_output.defined() && result.shares_buffer_with(shared_output))
      result.buffer()->mark_shared_result();
    return result;
  }

  Tensor shared_memory_all_reduce(const std::vector<Tensor>& inputs, bool mean) override {
    return rendezvous(inputs, {}, mean);
  }
  Tensor shared_memory_all_reduce(const std::vector<Tensor>& inputs,
                                  const std::vector<OuterProduct>& products) override {
    return rendezvous(inputs, products, false);
  }

  uint32_t merge_calls() const override { return calls_; }
  uint64_t step() const override { return step_; }

 private:
  Tensor rendezvous(const std::vector<Tensor>& inputs, const std::vector<OuterProduct>& products,
                    bool mean) {
    const int64_t instance = next_instance();
    try {
      SharedMemoryReduce how{host_accumulate,
                             host_add_into,
                             mean,
                             host_add_into_finite,
                             host_add_into_finite_streaming,
                             streaming_store_min_bytes()};
      return shared_.rendezvous(step_, instance)
          ->run(replica_, inputs, products, how, shared_.merge_timeout);
    } catch (const Error& e) {
      throw failed(instance, e.what());
    }
  }

  // Same (step, sequence) on every replica: the collectives of a step are issued in the same
  // order everywhere (spec §5.4), so this is the shared instance key.
  int64_t next_instance() { return int64_t(step_ << 20) + collectives_++; }

  Error failed(int64_t instance, const std::string& why) const {
    return aborted("replica " + std::to_string(replica_) + ": collective " +
                   std::to_string(instance) + " at step " + std::to_string(step_) +
                   " failed: " + why);
  }

  caf::blocking_actor* self_;
  const caf::actor& barrier_;
  const caf::actor& peer_;
  ReplicaGroupShared& shared_;
  int replica_;
  uint64_t step_;
  uint32_t calls_ = 0;
  int64_t collectives_ = 0;
};

// The replica's thread: takes the orders of its group's step exchange until the exchange closes.
void replica(caf::blocking_actor* self, int id, std::shared_ptr<ReplicaGroupShared> shared,
             caf::actor barrier, caf::actor peer) {
  while (auto order = shared->steps.next(id)) {
    BarrierPort port(self, barrier, peer, *shared, id, order->step);
    StepReport report{order->step, {}, {}};
    try {
      report.outputs = (*order->task)(id, port, order->args);
    } catch (const Error& e) {
      report.status = e.status();
    } catch (const std::bad_alloc&) {
      report.status = {Code::failed_precondition,
                       "out of memory while running the step (std::bad_alloc)"};
    } catch (const std::exception& e) {
      report.status = {Code::internal, e.what()};
    }
    const bool failed = !report.status.ok();
    // Replicas waiting for this one in a shared-memory collective must not wait in vain: now
    // that it failed or finished the step, it joins no further collective of the step (every
    // one it joined has completed, since a rank leaves only after all arrived).
    shared->abort_collectives(
        order->step, failed
                         ? "replica " + std::to_string(id) + " failed: " + report.status.message()
                         : "replica " + std::to_string(id) + " already finished step " +
                               std::to_string(order->step) + " and will not join");
    // A parked replica learns at once that this one will not arrive (the unequal-count error).
    if (failed)
      shared->rounds.failed(id, order->step, report.status.message());
    else
      shared->rounds.finished(id, order->step, port.merge_calls());
    // The task (and what it captured) goes before the report: once reported, this replica is
    // idle and its caller may free what the task referred to (StepExchange::wait_idle).
    order.reset();
    shared->steps.report(id, std::move(report));
  }
}

}  // namespace

std::thread start_replica_thread(caf::actor_system& system, int id,
                                 std::shared_ptr<ReplicaGroupShared> shared, caf::actor barrier,
                                 caf::actor peer, bool flush_denormals) {
  return std::thread([&system, id, shared = std::move(shared), barrier = std::move(barrier),
                      peer = std::move(peer), flush_denormals]() mutable {
    // Every kernel of this replica runs on this thread (oneDNN's GEMMs included): its mode is
    // the replica's.
    set_flush_denormals(flush_denormals);
    // This thread's GEMMs may be shared with the group's idle replicas, and it helps theirs
    // while it waits (core/work_share.hpp). A helper runs another replica's block in its own
    // float mode: every replica of a group has the same one.
    WorkShare::Member member(shared->work_share, id);
    // The thread's own mailbox for the replies to its requests (collectives to its peer).
    caf::scoped_actor self{system};
    replica(self.ptr(), id, std::move(shared), std::move(barrier), std::move(peer));
  });
}

}  // namespace troupe
