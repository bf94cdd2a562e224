// WorkerCollective over this worker's collective peer actor: each call packs the values per
// dtype (and bytes_per_pack), starts one ring all-reduce per pack on the peer — all packs in
// flight at once — and waits for every answer. The peer monitors the other workers' peers, so a
// worker that dies fails the waiting call within milliseconds, naming its rank; this class adds
// the task names. When the group has a shared-memory rendezvous (every worker on this host),
// every pack skips the actors: the calling thread meets the other workers there.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <mutex>
#include <optional>

#include <caf/all.hpp>

#include "coordinator/cluster/cross_memory_all_reduce.hpp"
#include "coordinator/cluster/small_collective_rendezvous.hpp"
#include "coordinator/collectives/worker_collective.hpp"
#include "core/collective/group_failure.hpp"
#include "core/packing.hpp"
#include "core/status.hpp"
#include "messages/collective_messages.hpp"
#include "messages/error_channel.hpp"
#include "messages/tensor_msg.hpp"
#include "messages/timed_request.hpp"
#include "net/shm_rendezvous.hpp"

namespace troupe {
namespace {

class SingleWorker final : public WorkerCollective {
 public:
  int num_workers() const override { return 1; }
  int worker_index() const override { return 0; }
  std::vector<std::string> worker_names() const override { return {"/job:localhost/task:0"}; }
  void configure(const CommunicationOptions&) override {}
  std::vector<Tensor> all_reduce_sum(const std::vector<Tensor>& values) override { return values; }
  Tensor broadcast(const Tensor& value, int root) override {
    if (root != 0)
      throw invalid_argument("broadcast from worker " + std::to_string(root) +
                             " in a group of 1 worker");
    return value;
  }
};

class PeerWorkers final : public WorkerCollective {
 public:
  PeerWorkers(caf::actor_system& system, caf::actor peer, int index, std::vector<std::string> names,
              CommunicationOptions options, OneHostCollectivePath one_host)
      : self_(system),
        peer_(std::move(peer)),
        index_(index),
        names_(std::move(names)),
        options_(options),
        one_host_(std::move(one_host)) {
    if (options_.timeout.count() <= 0) options_.timeout = std::chrono::minutes(10);
  }

  int num_workers() const override { return int(names_.size()); }
  int worker_index() const override { return index_; }
  std::vector<std::string> worker_names() const override { return names_; }
  void configure(const CommunicationOptions& options) override {
    std::lock_guard<std::mutex> lock(mutex_);
    options_ = options;
    if (options_.timeout.count() <= 0) options_.timeout = std::chrono::minutes(10);
  }

  std::vector<Tensor> all_reduce_sum(const std::vector<Tensor>& values) override {
    // Packs: tensors of one dtype, grouped by bytes_per_pack, in list order.
    std::vector<std::vector<size_t>> packs;
    std::vector<DType> seen;
    for (auto& v : values)
      if (std::find(seen.begin(), seen.end(), v.dtype()) == seen.end()) seen.push_back(v.dtype());
    for (DType dtype : seen) {
      std::vector<size_t> members;
      std::vector<int64_t> bytes;
      for (size_t i = 0; i < values.size(); ++i)
        if (values[i].dtype() == dtype) {
          members.push_back(i);
          bytes.push_back(int64_t(values[i].byte_size()));
        }
      for (auto& group : group_by_size(bytes, options_.bytes_per_pack)) {
        std::vector<size_t> pack;
        for (size_t k : group) pack.push_back(members[k]);
        packs.push_back(std::move(pack));
      }
    }
    std::lock_guard<std::mutex> lock(mutex_);  // instance keys follow the call order
    std::vector<Tensor> flats;
    for (auto& pack : packs) {
      std::vector<Tensor> parts;
      for (size_t i : pack) parts.push_back(values[i]);
      flats.push_back(concat_flat(parts));
    }
    // Small packs meet in the rendezvous one after another; larger ones are read from the other
    // workers' memory where every worker offers and can, else summed through the rendezvous in
    // pieces; without a rendezvous all run on the peer at once. Every worker makes the same
    // choice for the same pack, so the paths never mix.
    std::vector<Tensor> sums(flats.size()), ring;
    std::vector<size_t> on_ring;
    for (size_t p = 0; p < flats.size(); ++p) {
      if (!one_host_.rendezvous) {
        on_ring.push_back(p);
        ring.push_back(flats[p]);
      } else if (flats[p].byte_size() <= one_host_.small_bytes) {
        sums[p] = rendezvous_sum(flats[p], "small all-reduce");
      } else {
        sums[p] = large_sum(flats[p]);
      }
    }
    if (!ring.empty()) {
      auto ring_sums = run_packs(ring);
      for (size_t k = 0; k < on_ring.size(); ++k) sums[on_ring[k]] = std::move(ring_sums[k]);
    }
    std::vector<Tensor> out(values.size());
    for (size_t p = 0; p < packs.size(); ++p) {
      std::vector<Shape> shapes;
      for (size_t i : packs[p]) shapes.push_back(values[i].shape());
      auto parts = split_flat(sums[p], shapes);
      for (size_t k = 0; k < packs[p].size(); ++k) out[packs[p][k]] = parts[k];
    }
    return out;
  }

  Tensor broadcast(const Tensor& value, int root) override {
    if (root < 0 || root >= num_workers())
      throw invalid_argument("broadcast from worker " + std::to_string(root) + " in a group of " +
                             std::to_string(num_workers()) + " workers");
    // The root's value plus zeros from everyone else: exact in every dtype.
    Tensor mine = root == index_ ? value : Tensor::zeros(value.dtype(), value.shape());
    return all_reduce_sum({mine}).at(0);
  }

 private:
  // Every worker's pack through the rendezvous (in one exchange, or in slot-sized pieces),
  // summed in rank order: the same bits on every worker.
  Tensor rendezvous_sum(const Tensor& flat, const char* what) {
    try {
      return rendezvous_pieces_sum(*one_host_.rendezvous, index_, flat, options_.timeout,
                                   one_host_.failure.get());
    } catch (const Error& e) {
      throw Error(e.code(), describe(Status(e.code(), e.what()), what));
    }
  }

  // A pack larger than the small ones: read from the other workers' memory where every worker
  // offers that and can, else through the rendezvous in pieces. Every worker votes, whether it
  // offers the path or not, until the group once refused it. The first choice is logged, so that
  // a run's log says which path its large packs took.
  Tensor large_sum(const Tensor& flat) {
    const bool offered = cross_memory_allowed(options_.cross_memory);
    std::optional<Tensor> sum;
    try {
      auto failure = one_host_.failure;
      sum = cross_memory_all_reduce_sum(
          *one_host_.rendezvous, index_, flat, offered, options_.timeout,
          [failure] { return failure ? failure->why() : std::string(); }, &cross_memory_votes_);
    } catch (const Error& e) {
      throw Error(e.code(), describe(Status(e.code(), e.what()), "all-reduce in shared memory"));
    }
    if (!large_path_logged_) {
      large_path_logged_ = true;
      const std::string why =
          offered ? std::string("another worker does not offer that or cannot read this one")
                  : "cross memory " + describe_cross_memory(options_.cross_memory);
      const std::string path = sum ? std::string("are read from the other workers' memory")
                                   : "are summed in shared memory in pieces of " +
                                         std::to_string(one_host_.rendezvous->slot_bytes()) +
                                         " bytes (" + why + ")";
      std::fprintf(stderr, "troupe: worker %s: all-reduces above %zu bytes %s\n",
                   names_.at(size_t(index_)).c_str(), one_host_.small_bytes, path.c_str());
    }
    return sum ? *std::move(sum) : rendezvous_sum(flat, "large all-reduce in shared memory");
  }

  std::vector<Tensor> run_packs(const std::vector<Tensor>& flats) {
    const int32_t kind = int32_t(CrossDeviceOpKind::collective_all_reduce);
    using handle = decltype(timed_request(self_, peer_, options_.timeout, collective_start_msg{}));
    std::vector<handle> pending;
    std::vector<int64_t> instances;
    for (auto& flat : flats) {
      instances.push_back(next_instance_++);
      pending.push_back(
          timed_request(self_, peer_, options_.timeout,
                        collective_start_msg{instances.back(), kind, int32_t(names_.size()),
                                             options_.chunk_bytes, 0, 0, flat, Tensor{}}));
    }
    std::vector<Tensor> sums(flats.size());
    std::optional<Status> failure;
    for (size_t p = 0; p < pending.size(); ++p)
      pending[p].receive([&](tensor_msg& reply) { sums[p] = std::move(reply.tensor); },
                         [&](caf::error& e) {
                           if (!failure) failure = to_status(e);
                         });
    if (failure)
      throw Error(failure->code(),
                  describe(*failure, "instance " + std::to_string(instances.front())));
    return sums;
  }

  // "rank R" in the peer's message becomes the task it is.
  std::string describe(const Status& why, const std::string& which) const {
    std::string text = why.message();
    for (size_t r = 0; r < names_.size(); ++r) {
      const std::string rank = "rank " + std::to_string(r);
      for (size_t at = text.find(rank); at != std::string::npos;
           at = text.find(rank, at + rank.size())) {
        const size_t end = at + rank.size();
        if (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) continue;
        const std::string named = rank + " (" + names_[r] + ")";
        text.replace(at, rank.size(), named);
        at += named.size() - rank.size();
      }
    }
    return "all-reduce across workers (" + which + ", worker " + names_[size_t(index_)] +
           ") failed: " + text;
  }

  caf::scoped_actor self_;
  caf::actor peer_;
  int index_;
  std::vector<std::string> names_;
  CommunicationOptions options_;
  OneHostCollectivePath one_host_;
  std::mutex mutex_;
  bool large_path_logged_ = false;       // under mutex_ (all_reduce_sum holds it)
  CrossMemoryVotes cross_memory_votes_;  // under mutex_
  int64_t next_instance_ = 1;
};

}  // namespace

CommunicationImplementation parse_communication_implementation(const std::string& text,
                                                               const std::string& field) {
  std::string t;
  for (char c : text) t.push_back(char(std::tolower(static_cast<unsigned char>(c))));
  if (t == "auto") return CommunicationImplementation::automatic;
  if (t == "ring") return CommunicationImplementation::ring;
  if (t == "nccl") return CommunicationImplementation::nccl;
  throw invalid_argument(field + ": unknown communication implementation '" + text +
                         "' (AUTO, RING or NCCL)");
}

std::shared_ptr<WorkerCollective> single_worker_collective() {
  return std::make_shared<SingleWorker>();
}

std::shared_ptr<WorkerCollective> peer_worker_collective(caf::actor_system& system, caf::actor peer,
                                                         int index, std::vector<std::string> names,
                                                         CommunicationOptions options,
                                                         OneHostCollectivePath one_host) {
  if (names.empty() || index < 0 || index >= int(names.size()))
    throw invalid_argument("peer_worker_collective: worker " + std::to_string(index) + " of " +
                           std::to_string(names.size()));
  if (one_host.rendezvous && one_host.rendezvous->ranks() != int(names.size()))
    throw invalid_argument("peer_worker_collective: a rendezvous of " +
                           std::to_string(one_host.rendezvous->ranks()) + " ranks for " +
                           std::to_string(names.size()) + " workers");
  return std::make_shared<PeerWorkers>(system, std::move(peer), index, std::move(names), options,
                                       std::move(one_host));
}

}  // namespace troupe
