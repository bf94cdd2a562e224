#include "core/work_share.hpp"

#include <sched.h>

#include <algorithm>
#include <thread>

namespace troupe {

// One member's current job. The owner writes the description, then opens it; a helper counts
// itself in `helpers` before it looks at `open`, and the owner closes the job and waits for
// `helpers` to drop to 0 before it returns: both sides use sequentially consistent operations,
// so either the owner sees the helper counted or the helper sees the job closed (a helper can
// never claim a block of a job that has already returned, nor of the owner's next one).
struct WorkShare::Job {
  RowsFn fn = nullptr;
  const void* context = nullptr;
  int64_t rows = 0, block_rows = 0;
  std::atomic<int> blocks{0};  ///< atomic: work_available reads it without joining the job
  std::atomic<bool> open{false};
  std::atomic<int> helpers{0};
  std::atomic<int> next{0};    ///< the next block to claim (may run past `blocks`)
  std::atomic<int> helped{0};  ///< blocks other members ran
  std::mutex error_mutex;
  std::exception_ptr error;  ///< the first exception a block threw
};

// Cache-line aligned: the owner's and the helpers' counters of one job share a line by design,
// two members' jobs do not.
struct alignas(64) WorkShare::MemberState {
  Job job;
  std::vector<Hint> hints;  ///< touched by the owner only
};

namespace {

thread_local WorkShare* t_share = nullptr;
thread_local int t_member = -1;

// Blocks per GEMM when it is cut: a quarter of a step's largest GEMM is the most a helper waits
// on its owner, and 4 row blocks of 128 x 784 x 256 keep 94-98 % of the whole call's rate where
// 8 keep 85-90 % (oneDNN, one thread, Xeon VM).
constexpr int64_t kMaxBlocks = 4;

// Cores this process may run on (its affinity mask; taskset and cgroup cpusets shrink it).
int usable_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

WorkShare::WorkShare(int members)
    : members_(std::max(members, 0)),
      sharing_(members >= 2 && members <= usable_cores()),
      state_(new MemberState[size_t(members_)]) {}

WorkShare::~WorkShare() = default;

WorkShare* WorkShare::current() { return t_share; }
int WorkShare::current_member() { return t_member; }

WorkShare::Member::Member(WorkShare& share, int member)
    : saved_share_(t_share), saved_member_(t_member) {
  t_share = &share;
  t_member = member;
}

WorkShare::Member::~Member() {
  t_share = saved_share_;
  t_member = saved_member_;
}

bool& WorkShare::hint_for(int member, uint64_t shape_key) {
  auto& hints = state_[size_t(member)].hints;
  for (auto& h : hints)
    if (h.shape_key == shape_key) return h.split;
  hints.push_back({shape_key, false});
  return hints.back().split;
}

int WorkShare::run_blocks(Job& job) {
  int ran = 0;
  const int blocks = job.blocks.load(std::memory_order_relaxed);
  for (int b; (b = job.next.fetch_add(1, std::memory_order_relaxed)) < blocks;) {
    const int64_t begin = int64_t(b) * job.block_rows;
    const int64_t end = std::min(job.rows, begin + job.block_rows);
    try {
      job.fn(job.context, begin, end);
    } catch (...) {
      std::lock_guard<std::mutex> lock(job.error_mutex);
      if (!job.error) job.error = std::current_exception();
    }
    ++ran;
  }
  return ran;
}

int64_t WorkShare::block_rows(int64_t rows, int64_t min_block_rows) {
  const int64_t blocks =
      std::max<int64_t>(1, std::min(rows / std::max<int64_t>(min_block_rows, 1), kMaxBlocks));
  return (rows + blocks - 1) / blocks;
}

void WorkShare::run_rows(int member, uint64_t shape_key, int64_t rows, int64_t min_block_rows,
                         RowsFn fn, const void* context) {
  min_block_rows = std::max<int64_t>(min_block_rows, 1);
  const bool can_split = sharing_ && member >= 0 && member < members_ && rows >= 2 * min_block_rows;
  if (!can_split) {
    fn(context, 0, rows);
    return;
  }
  bool& hint = hint_for(member, shape_key);
  if (!hint && idle_.load(std::memory_order_seq_cst) == 0) {
    fn(context, 0, rows);
    // Someone waited for this call's end: next time, cut it so they can help.
    hint = idle_.load(std::memory_order_seq_cst) > 0;
    return;
  }
  Job& job = state_[size_t(member)].job;
  job.fn = fn;
  job.context = context;
  job.rows = rows;
  job.block_rows = block_rows(rows, min_block_rows);
  job.blocks.store(int((rows + job.block_rows - 1) / job.block_rows), std::memory_order_relaxed);
  job.next.store(0, std::memory_order_relaxed);
  job.helped.store(0, std::memory_order_relaxed);
  job.error = nullptr;
  job.open.store(true, std::memory_order_seq_cst);
  run_blocks(job);
  job.open.store(false, std::memory_order_seq_cst);
  // A helper that claimed a block is running it: wait for it (at most one block's time).
  for (int i = 1; job.helpers.load(std::memory_order_seq_cst) != 0; ++i)
    if (i % 64 == 0) std::this_thread::yield();
  // Keep cutting this shape while it is helped or waited for; stop once neither happens.
  hint =
      job.helped.load(std::memory_order_relaxed) > 0 || idle_.load(std::memory_order_seq_cst) > 0;
  if (job.error) std::rethrow_exception(std::exchange(job.error, nullptr));
}

bool WorkShare::work_available(int member) const {
  for (int m = 0; m < members_; ++m) {
    if (m == member) continue;
    const Job& job = state_[size_t(m)].job;
    if (job.open.load(std::memory_order_acquire) &&
        job.next.load(std::memory_order_relaxed) < job.blocks.load(std::memory_order_relaxed))
      return true;
  }
  return false;
}

bool WorkShare::help(int member) {
  int ran = 0;
  for (int m = 0; m < members_; ++m) {
    if (m == member) continue;
    Job& job = state_[size_t(m)].job;
    job.helpers.fetch_add(1, std::memory_order_seq_cst);
    if (job.open.load(std::memory_order_seq_cst)) {
      const int here = run_blocks(job);
      job.helped.fetch_add(here, std::memory_order_relaxed);
      helped_blocks_.fetch_add(here, std::memory_order_relaxed);
      ran += here;
    }
    job.helpers.fetch_sub(1, std::memory_order_seq_cst);
  }
  return ran > 0;
}

WorkShare::Idle::Idle() : share_(t_share), member_(t_member) {
  if (share_ && !share_->sharing_) share_ = nullptr;
  if (share_) share_->idle_.fetch_add(1, std::memory_order_seq_cst);
}

WorkShare::Idle::~Idle() {
  if (share_) share_->idle_.fetch_sub(1, std::memory_order_seq_cst);
}

bool WorkShare::Idle::help() { return share_ && share_->help(member_); }

bool WorkShare::Idle::work_available() const { return share_ && share_->work_available(member_); }

}  // namespace troupe
