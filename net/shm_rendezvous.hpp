#pragma once
// A rendezvous of the ranks of one host in a shared-memory segment, for collectives too small
// for the ring. Each rank copies its contribution into its own slot, announces it, and waits
// until every rank has announced the same call; then every rank reads every slot. The calling
// thread does all of it: no actor, no reader thread, no wake-up when the ranks arrive together.
// That is what a 4 KiB all-reduce between processes needs: through the collective peer actors
// it cost 150-200 us of thread hand-offs on this machine (docs/benchmarks.md), the bytes a few.
//
// Each rank has `depth` slots (2 unless asked), used in turn by its calls. A rank writes call k's
// slot only after every rank released call k-depth, the call that slot held last (a rank
// releases a call when it is done reading its slots: explicitly, or by making its next
// exchange): a slot is never overwritten while someone reads it. With exchange() alone and two
// slots that never waits: every rank released k-2 before it announced k-1. A large all-reduce
// posts pieces ahead (post/collect/release) and so keeps `depth - 1` pieces in flight, which
// lets a rank that has a core copy on while its partner waits for one.
//
// Waiting spins briefly (the others are usually a few microseconds away), yields, then sleeps on
// a futex in the segment in 1 ms slices, asking the caller's `stop` function after each: the
// segment cannot tell a dead rank from a slow one, the caller's group (heartbeats, monitors) can.
//
// Setup, across the processes: rank 0 creates the segment (a random name, mode 0600) and hands
// the name to the others over the authenticated control channel; each rank opens it and
// attach()es; rank 0 decides on (every rank attached) or off and unlinks the name, so the
// segment outlives no process. Every rank then follows the decision, so either all ranks use
// the rendezvous or none does.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace troupe {

class ShmRendezvous {
 public:
  enum class Decision : int32_t { pending = 0, on = 1, off = 2 };

  static constexpr int kMaxDepth = 8;
  /// Rank 0's side: a fresh segment for `ranks` ranks, `depth` (2..kMaxDepth) slots per rank
  /// and contributions of up to `slot_bytes`. Throws unavailable naming the segment when it
  /// cannot be created or reserved.
  static std::unique_ptr<ShmRendezvous> create(int ranks, size_t slot_bytes, int depth = 2);
  /// Another rank's side: maps the segment `name`; throws unavailable naming it when it cannot,
  /// or when the segment is not a rendezvous for `ranks` ranks.
  static std::unique_ptr<ShmRendezvous> open(const std::string& name, int ranks);
  ~ShmRendezvous();
  ShmRendezvous(const ShmRendezvous&) = delete;
  ShmRendezvous& operator=(const ShmRendezvous&) = delete;

  const std::string& name() const { return name_; }
  int ranks() const;
  size_t slot_bytes() const;
  int depth() const;

  /// Records `rank` (this process) as present.
  void attach(int rank);
  /// How many ranks have attached so far.
  int attached() const;
  /// Rank 0: publishes the decision every rank follows.
  void decide(Decision decision);
  Decision decision() const;
  /// Removes the name (mappings stay). Rank 0 calls it once the others attached or never will.
  void unlink();

  /// Non-empty: stop waiting and fail with this reason (a rank of the group is known dead).
  using StopFn = std::function<std::string()>;
  /// Publishes `bytes` bytes at `data` as this rank's contribution to its next call and waits
  /// for every rank's contribution to the same call; returns a pointer to each rank's bytes, in
  /// rank order, valid until this rank's next call. Throws unavailable with stop()'s
  /// reason, deadline_exceeded naming the ranks that did not arrive within `timeout`, or
  /// invalid_argument when the ranks' sizes differ or exceed slot_bytes().
  std::vector<const char*> exchange(int rank, const void* data, size_t bytes,
                                    std::chrono::milliseconds timeout, const StopFn& stop);

  /// The parts of exchange(), for pipelining. post() copies `bytes` at `data` into this rank's
  /// slot of its next call and announces it, waiting only while that slot is still read (for
  /// every rank to release the call depth() before); returns the call's number. collect() waits
  /// for every rank's contribution to `call` (of `bytes` bytes) and returns them in rank order,
  /// valid until this rank releases the call. release() says this rank is done reading the
  /// slots of `call` and every call before it. Throw like exchange().
  uint64_t post(int rank, const void* data, size_t bytes, std::chrono::milliseconds timeout,
                const StopFn& stop);
  std::vector<const char*> collect(int rank, uint64_t call, size_t bytes,
                                   std::chrono::milliseconds timeout, const StopFn& stop);
  void release(int rank, uint64_t call);

 private:
  struct Header;
  struct RankState;
  ShmRendezvous() = default;
  RankState& state(int rank) const;
  char* slot(uint64_t call, int rank) const;
  /// Waits until missing(r) is false for every rank r; throws unavailable with stop()'s reason
  /// or deadline_exceeded "call C: rank(s) R did not <verb> within T ms".
  template <class Missing>
  void wait_for_ranks(Missing missing, uint64_t call, const std::string& verb,
                      std::chrono::milliseconds timeout, const StopFn& stop);
  void ring_bell();

  std::string name_;
  bool linked_ = false;
  void* base_ = nullptr;
  size_t mapped_ = 0;
  Header* header_ = nullptr;
  uint64_t calls_ = 0;  // this rank's calls so far
};

}  // namespace troupe
