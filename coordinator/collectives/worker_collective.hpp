#pragma once
// The collectives between workers (processes) of a multi-worker strategy, seen from one worker:
// what MultiWorkerMirroredStrategy's cross-device op runs after this worker's replicas have met
// in memory. Every worker must call the same collectives in the same order with matching dtypes
// and shapes; the order is what gives each call its instance key on every worker (TF's
// CollectiveKeys are assigned the same way: by program order), so concurrent programs never mix.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/fwd.hpp>

#include "coordinator/cluster/cross_memory_policy.hpp"
#include "core/collective/algorithm_choice.hpp"
#include "core/tensor.hpp"

namespace troupe {

class GroupFailure;
class ShmRendezvous;

/// tf.distribute.experimental.CommunicationImplementation.
enum class CommunicationImplementation { automatic, ring, nccl };

/// "AUTO" / "RING" / "NCCL" (also lower case); throws invalid_argument naming `field`.
CommunicationImplementation parse_communication_implementation(const std::string& text,
                                                               const std::string& field);

/// tf.distribute.experimental.CommunicationOptions.
struct CommunicationOptions {
  CommunicationImplementation implementation = CommunicationImplementation::automatic;
  /// Tensors of one dtype are packed into collectives of at most this many bytes (0: one pack).
  int64_t bytes_per_pack = 0;
  /// A collective not done by then fails naming the workers it waited for (0: 10 minutes).
  std::chrono::milliseconds timeout{0};
  /// Largest chunk message of the ring between workers.
  int64_t chunk_bytes = 1 << 20;
  /// Packs above the small ones, between workers of one host: read from each other's memory
  /// (on), summed through the shared-memory rendezvous in pieces (off), or whichever this host's
  /// measured rates favour (automatic; coordinator/cluster/cross_memory_policy.hpp).
  CrossMemoryPolicy cross_memory = CrossMemoryPolicy::automatic;
};

/// One worker's side of the collectives between workers.
class WorkerCollective {
 public:
  virtual ~WorkerCollective() = default;
  virtual int num_workers() const = 0;
  virtual int worker_index() const = 0;
  /// The task names of the workers in rank order ("/job:worker/task:1"), for error messages.
  virtual std::vector<std::string> worker_names() const = 0;
  /// The strategy's CommunicationOptions (timeout, bytes_per_pack, chunk size) for later calls.
  virtual void configure(const CommunicationOptions& options) = 0;
  /// Element-wise SUM over every worker's `values` (host tensors), one result per value.
  virtual std::vector<Tensor> all_reduce_sum(const std::vector<Tensor>& values) = 0;
  /// Worker `root`'s `value` on every worker (the others pass a tensor of the same dtype and
  /// shape, whose contents are ignored).
  virtual Tensor broadcast(const Tensor& value, int root) = 0;
};

/// The collectives of a group of one worker: every call returns its input.
std::shared_ptr<WorkerCollective> single_worker_collective();

/// The way around the actors when every worker is on one host: a shared-memory rendezvous
/// (coordinator/cluster/small_collective_rendezvous.hpp), through which larger packs may also be
/// read from each other's memory (coordinator/cluster/cross_memory_all_reduce.hpp).
struct OneHostCollectivePath {
  /// Packs of at most `small_bytes` meet here in one exchange. Larger packs are read from the
  /// other workers' memory through it where every worker offers that (CommunicationOptions::
  /// cross_memory) and can, else summed through it in slot-sized pieces. Null: every pack takes
  /// the peer's ring.
  std::shared_ptr<ShmRendezvous> rendezvous;
  /// The group's failure, which a call waiting in the rendezvous polls to fail naming the rank.
  std::shared_ptr<const GroupFailure> failure;
  size_t small_bytes = 0;  ///< 0: every pack is a large one
};

/// Collectives through this worker's collective peer actor, already connected to the other
/// workers' peers (coordinator/cluster/collective_group.hpp forms the group). `names` holds
/// every worker's task name in rank order.
std::shared_ptr<WorkerCollective> peer_worker_collective(caf::actor_system& system, caf::actor peer,
                                                         int index, std::vector<std::string> names,
                                                         CommunicationOptions options,
                                                         OneHostCollectivePath one_host = {});

}  // namespace troupe
