#pragma once
// Row blocks of one replica's large GEMM that an idle replica of the same process takes.
//
// The replicas of a synchronous group meet in every step's all-reduce, so a step runs at the
// pace of the slowest. On a VM the cores of one process often run at different speeds for seconds
// at a time (10-50 % apart, measured with a pinned FMA loop), and the faster replica then waits
// for most of its step's last GEMM. With a WorkShare, a replica that waits (WorkShare::Idle)
// takes row blocks of another member's GEMM (run_rows), so both cores work until the step's end.
//
// Results must not depend on who runs a block or whether a GEMM was cut: the GEMM kernel cuts
// only shapes whose row blocks the library computes with the whole call's bits on this CPU
// (kernels/cpu/matmul.cpp probes each shape once; tests/kernels/shared_gemm_test.cpp checks
// the bits with every GEMM library of the build). Splitting costs 2-6 % of a GEMM's rate (smaller
// calls repack B), so a member splits only where it pays: when another member is idle as its GEMM
// starts, or was idle when the same GEMM shape ended the last time (a per-shape hint: in a
// training step only the GEMMs at the end of the slower replica's step are ever waited for).
//
// The calling thread's share comes from WorkShare::Member (a thread-local scope the replica
// thread holds), so kernels need no new argument.

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "core/spin_wait.hpp"

namespace troupe {

class WorkShare {
 public:
  /// Rows [begin, end) of one job.
  using RowsFn = void (*)(const void* context, int64_t begin, int64_t end);

  /// A share for `members` threads. Sharing is off (run_rows runs whole, Idle does nothing) with
  /// fewer than 2 members or more members than the machine has cores: an idle member spins
  /// while it waits for work, which would take a core from a busy one.
  explicit WorkShare(int members);
  ~WorkShare();
  WorkShare(const WorkShare&) = delete;
  WorkShare& operator=(const WorkShare&) = delete;

  bool sharing() const { return sharing_; }
  /// Blocks that members ran for others since the share was made (what sharing achieved).
  int64_t helped_blocks() const { return helped_blocks_.load(std::memory_order_relaxed); }
  /// Members inside an Idle scope now.
  int idle_members() const { return idle_.load(std::memory_order_seq_cst); }

  /// Member `member` runs fn(context, b, e) over [0, rows): whole, or in blocks of at least
  /// `min_block_rows` rows of which idle members may take some. `shape_key` names the call's
  /// shape for the split hint. Returns when every row is done; rethrows the first exception a
  /// block threw (wherever it ran).
  void run_rows(int member, uint64_t shape_key, int64_t rows, int64_t min_block_rows, RowsFn fn,
                const void* context);

  /// Runs open blocks of the other members' jobs until none is left; true when it ran any.
  bool help(int member);
  /// Rows per block when run_rows cuts `rows` (the last block may be shorter).
  static int64_t block_rows(int64_t rows, int64_t min_block_rows);

  /// Whether another member has a job with blocks left to take.
  bool work_available(int member) const;

  /// The calling thread's share and member id while a Member scope is alive, else nullptr / -1.
  static WorkShare* current();
  static int current_member();

  /// Makes `share` the calling thread's, as member `member`, for the scope's lifetime.
  class Member {
   public:
    Member(WorkShare& share, int member);
    ~Member();
    Member(const Member&) = delete;
    Member& operator=(const Member&) = delete;

   private:
    WorkShare* saved_share_;
    int saved_member_;
  };

  /// The calling thread's member counts as idle for the scope's lifetime (a waiter): members
  /// starting a GEMM then split it, and help() takes their blocks. A no-op without a share.
  class Idle {
   public:
    Idle();
    ~Idle();
    Idle(const Idle&) = delete;
    Idle& operator=(const Idle&) = delete;
    /// Runs the other members' open blocks; true when it ran any.
    bool help();
    bool work_available() const;
    bool active() const { return share_ != nullptr; }

   private:
    WorkShare* share_;
    int member_;
  };

 private:
  struct Job;
  struct Hint {
    uint64_t shape_key;
    bool split;
  };
  struct MemberState;

  /// Runs claimed blocks of `job` until none is left; returns how many it ran.
  static int run_blocks(Job& job);
  bool& hint_for(int member, uint64_t shape_key);

  const int members_;
  const bool sharing_;
  std::unique_ptr<MemberState[]> state_;
  std::atomic<int> idle_{0};
  std::atomic<int64_t> helped_blocks_{0};
};

/// How long a waiter of a sharing group spins (helping) before it sleeps: longer than a plain
/// waiter (kSpinBudget), since the other member's GEMM blocks keep coming for the rest of its
/// step; in a training step the faster replica waits 0.4-0.9 ms for the slower one on the VM.
inline constexpr std::chrono::microseconds kHelpingSpinBudget{2000};

/// spin_until(ready) for a thread that may be a WorkShare member: while it waits it runs the
/// other members' open blocks, and spins up to kHelpingSpinBudget instead of kSpinBudget.
template <class Ready>
bool spin_until_helping(Ready ready) {
  WorkShare::Idle idle;
  if (!idle.active()) return spin_until(ready);
  const auto stop = std::chrono::steady_clock::now() + kHelpingSpinBudget;
  while (std::chrono::steady_clock::now() < stop) {
    if (!spin_until([&] { return ready() || idle.work_available(); })) continue;
    if (ready()) return true;
    idle.help();
  }
  return ready();
}

}  // namespace troupe
