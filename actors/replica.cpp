#include "actors/replica.hpp"

#include <caf/all.hpp>

#include "core/collective/algorithm_choice.hpp"
#include "kernels/host_accumulate.hpp"
#include "messages/collective_messages.hpp"
#include "messages/replica_messages.hpp"
#include "messages/tensor_msg.hpp"

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
    auto& slot = shared_.slots[size_t(replica_)];
    slot.runner = std::move(runner);  // published to the barrier by the message below
    uint32_t call = calls_++;
    self_->send(barrier_, merge_arrival_msg{step_, call, tag, int32_t(replica_), std::move(args)});
    // The barrier answers within its own timeout; the margin only guards against a dead barrier.
    auto outcome = slot.reply.take(shared_.merge_timeout + std::chrono::seconds(5));
    if (!outcome)
      throw deadline_exceeded("replica " + std::to_string(replica_) +
                              ": the merge_call barrier did not answer (step " +
                              std::to_string(step_) + ", merge_call " + std::to_string(call) + ")");
    outcome->status.throw_if_error();
    return std::move(outcome->values);
  }

  Tensor collective(const CollectiveCall& call, const Tensor& input) override {
    // Same (step, sequence) on every replica: the collectives of a step are issued in the same
    // order everywhere (spec §5.4), so this is the shared instance key.
    int64_t instance = int64_t(step_ << 20) + collectives_++;
    auto failed = [&](const std::string& why) {
      return aborted("replica " + std::to_string(replica_) + ": collective " +
                     std::to_string(instance) + " at step " + std::to_string(step_) +
                     " failed: " + why);
    };
    if (call.shared_memory) {
      try {
        return shared_.rendezvous(step_, instance)
            ->run(replica_, input, {host_accumulate, host_add_into, call.mean},
                  shared_.merge_timeout);
      } catch (const Error& e) {
        throw failed(e.what());
      }
    }
    collective_start_msg start{
        instance, call.kind, int32_t(shared_.size()), call.chunk_bytes, 0, call.tensor_index,
        input,    Tensor{}};
    // The ring's ranks share this group's memory: one result buffer for all of them means
    // no all-gather copies (CollectiveSpec::shared_output).
    if (call.kind == int(CrossDeviceOpKind::collective_all_reduce))
      start.shared_output =
          shared_.collective_output(step_, instance, input.dtype(), input.num_elements());
    Tensor result;
    std::string failure;
    self_->request(peer_, shared_.merge_timeout, std::move(start))
        .receive([&](tensor_msg& reply) { result = std::move(reply.tensor); },
                 [&](caf::error& e) { failure = self_->system().render(e); });
    if (!failure.empty()) throw failed(failure);
    return result;
  }

  uint32_t merge_calls() const override { return calls_; }
  uint64_t step() const override { return step_; }

 private:
  caf::blocking_actor* self_;
  const caf::actor& barrier_;
  const caf::actor& peer_;
  ReplicaGroupShared& shared_;
  int replica_;
  uint64_t step_;
  uint32_t calls_ = 0;
  int64_t collectives_ = 0;
};

void replica(caf::blocking_actor* self, int id, std::shared_ptr<ReplicaGroupShared> shared,
             caf::actor barrier, caf::actor peer) {
  bool running = true;
  self->receive_while(running)(
      [&](run_step_msg& m) {
        auto reply_to = caf::actor_cast<caf::actor>(self->current_sender());
        BarrierPort port(self, barrier, peer, *shared, id, m.step);
        try {
          auto task = shared->task(m.task);
          auto outputs = task(id, port, m.args);
          self->send(barrier, replica_done_msg{m.step, id, port.merge_calls(), false, {}});
          self->send(reply_to, step_result_msg{m.step, id, std::move(outputs)});
        } catch (const Error& e) {
          self->send(barrier, replica_done_msg{m.step, id, port.merge_calls(), true, e.what()});
          self->send(reply_to, step_error_msg{m.step, id, int32_t(e.code()), e.what()});
        } catch (const std::exception& e) {
          self->send(barrier, replica_done_msg{m.step, id, port.merge_calls(), true, e.what()});
          self->send(reply_to, step_error_msg{m.step, id, int32_t(Code::internal), e.what()});
        }
      },
      [&](caf::exit_msg&) { running = false; });
}

}  // namespace

caf::actor spawn_replica(caf::actor_system& system, int id,
                         std::shared_ptr<ReplicaGroupShared> shared, caf::actor barrier,
                         caf::actor peer) {
  return system.spawn<caf::detached>(replica, id, std::move(shared), std::move(barrier),
                                     std::move(peer));
}

}  // namespace troupe
