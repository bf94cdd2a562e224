#include "net/shm_rendezvous.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>

#include "core/status.hpp"
#include "net/shm_futex.hpp"

namespace troupe {

struct ShmRendezvous::Header {
  uint32_t magic;
  int32_t ranks;
  uint64_t slot_bytes;
  std::atomic<int32_t> attached;
  std::atomic<int32_t> decision;
  int32_t depth;                           // slots per rank, used in turn by its calls
  alignas(64) std::atomic<uint32_t> bell;  // futex word: bumped by every announcement
  std::atomic<uint32_t> sleepers;          // ranks asleep on `bell`
};

struct ShmRendezvous::RankState {
  alignas(64) std::atomic<uint64_t> announced;  // the last call whose slot is filled
  std::atomic<uint64_t> released;               // the last call whose slots it finished reading
  std::atomic<uint64_t> bytes[ShmRendezvous::kMaxDepth];  // the size of the call in each slot
  std::atomic<int32_t> pid;
};

namespace {

constexpr uint32_t kMagic = 0x7472647a;  // "trdz"
constexpr size_t kHeaderBytes = 256;
constexpr size_t kStateBytes = 128;  // one RankState, two cache lines
constexpr size_t kPage = 4096;
// Waiting has three phases. A short pause-spin catches a partner running on another core
// (about 6 us of pause). Then sched_yield until kYieldBudget: it costs ~0.5 us a round when the
// partner has its own core and hands the core over at once when the partner waits on the same
// one (with a pure pause-spin, two ranks sharing a core paid the whole spin budget each call). The
// budget outlasts a futex wake across vCPUs (~55 us measured on a 2-vCPU VM): a shorter one let
// the ranks fall into a lockstep where each call one of them slept and woke the other late. Then
// a futex sleep in slices.
constexpr int kPauseSpins = 64;
constexpr auto kYieldBudget = std::chrono::microseconds(250);
constexpr int kSleepSliceMs = 1;  // how often a sleeping rank asks stop() and the clock

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

size_t data_offset(int ranks) {
  return round_up(kHeaderBytes + kStateBytes * size_t(ranks), kPage);
}

size_t segment_bytes(int ranks, int depth, size_t slot_bytes) {
  return data_offset(ranks) + size_t(depth) * size_t(ranks) * slot_bytes;
}

void* map_segment(int fd, size_t bytes, const std::string& name) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  std::string why = p == MAP_FAILED ? strerror(errno) : "";
  ::close(fd);
  if (p == MAP_FAILED)
    throw unavailable("cannot map shared-memory rendezvous " + name + ": " + why);
  return p;
}

}  // namespace

std::unique_ptr<ShmRendezvous> ShmRendezvous::create(int ranks, size_t slot_bytes, int depth) {
  if (ranks < 1 || ranks > 1024 || slot_bytes == 0 || slot_bytes % 64 != 0 || depth < 2 ||
      depth > kMaxDepth)
    throw invalid_argument("shared-memory rendezvous: " + std::to_string(ranks) + " ranks with " +
                           std::to_string(depth) + " slots of " + std::to_string(slot_bytes) +
                           " bytes (1..1024 ranks, 2.." + std::to_string(kMaxDepth) +
                           " slots a positive multiple of 64 bytes)");
  std::random_device entropy;
  char name[64];
  std::snprintf(name, sizeof name, "/troupe-rdv-%08x%08x", entropy(), entropy());
  int fd = ::shm_open(name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0)
    throw unavailable(std::string("cannot create shared-memory rendezvous ") + name + ": " +
                      strerror(errno));
  std::unique_ptr<ShmRendezvous> r(new ShmRendezvous());
  r->name_ = name;
  r->linked_ = true;
  const size_t bytes = segment_bytes(ranks, depth, slot_bytes);
  // Reserved now: a sparse segment on a full /dev/shm would SIGBUS at the first write.
  if (int reserved = ::posix_fallocate(fd, 0, off_t(bytes)); reserved != 0) {
    ::close(fd);
    throw unavailable("cannot reserve " + std::to_string(bytes) +
                      " bytes for shared-memory rendezvous " + r->name_ + ": " +
                      strerror(reserved));
  }
  r->base_ = map_segment(fd, bytes, r->name_);
  r->mapped_ = bytes;
  r->header_ = static_cast<Header*>(r->base_);  // zero-filled: counters and decision valid
  r->header_->ranks = ranks;
  r->header_->slot_bytes = slot_bytes;
  r->header_->depth = depth;
  std::atomic_thread_fence(std::memory_order_release);
  reinterpret_cast<std::atomic<uint32_t>*>(&r->header_->magic)->store(kMagic);
  return r;
}

std::unique_ptr<ShmRendezvous> ShmRendezvous::open(const std::string& name, int ranks) {
  int fd = ::shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0)
    throw unavailable("cannot open shared-memory rendezvous " + name + ": " + strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || size_t(st.st_size) < kHeaderBytes) {
    ::close(fd);
    throw unavailable("shared-memory rendezvous " + name + " is too small to be one");
  }
  std::unique_ptr<ShmRendezvous> r(new ShmRendezvous());
  r->name_ = name;
  r->mapped_ = size_t(st.st_size);
  r->base_ = map_segment(fd, r->mapped_, name);
  r->header_ = static_cast<Header*>(r->base_);
  const uint32_t magic = reinterpret_cast<std::atomic<uint32_t>*>(&r->header_->magic)->load();
  const int depth = r->header_->depth;
  if (magic != kMagic || r->header_->ranks != ranks || depth < 2 || depth > kMaxDepth ||
      segment_bytes(ranks, depth, r->header_->slot_bytes) != r->mapped_)
    throw unavailable("shared-memory rendezvous " + name + " is not one for " +
                      std::to_string(ranks) + " ranks (" + std::to_string(r->mapped_) + " bytes, " +
                      std::to_string(r->header_->ranks) + " ranks declared)");
  return r;
}

ShmRendezvous::~ShmRendezvous() {
  unlink();
  if (base_) ::munmap(base_, mapped_);
}

int ShmRendezvous::ranks() const { return header_->ranks; }
size_t ShmRendezvous::slot_bytes() const { return size_t(header_->slot_bytes); }
int ShmRendezvous::depth() const { return header_->depth; }

ShmRendezvous::RankState& ShmRendezvous::state(int rank) const {
  static_assert(sizeof(Header) <= kHeaderBytes);
  static_assert(sizeof(RankState) <= kStateBytes && kStateBytes % 64 == 0);
  return *reinterpret_cast<RankState*>(static_cast<char*>(base_) + kHeaderBytes +
                                       kStateBytes * size_t(rank));
}

char* ShmRendezvous::slot(uint64_t call, int rank) const {
  const size_t index = size_t(call % uint64_t(depth())) * size_t(ranks()) + size_t(rank);
  return static_cast<char*>(base_) + data_offset(ranks()) + index * slot_bytes();
}

void ShmRendezvous::attach(int rank) {
  if (rank < 0 || rank >= ranks())
    throw invalid_argument("shared-memory rendezvous: rank " + std::to_string(rank) + " of " +
                           std::to_string(ranks()));
  state(rank).pid.store(int32_t(::getpid()));
  header_->attached.fetch_add(1);
}

int ShmRendezvous::attached() const { return header_->attached.load(); }

void ShmRendezvous::decide(Decision decision) {
  header_->decision.store(int32_t(decision));
  header_->bell.fetch_add(1);
  shm::futex_wake(header_->bell);
}

ShmRendezvous::Decision ShmRendezvous::decision() const {
  return Decision(header_->decision.load());
}

void ShmRendezvous::unlink() {
  if (linked_) ::shm_unlink(name_.c_str());
  linked_ = false;
}

template <class Missing>
void ShmRendezvous::wait_for_ranks(Missing missing, uint64_t call, const std::string& verb,
                                   std::chrono::milliseconds timeout, const StopFn& stop) {
  const int n = ranks();
  auto first_missing = [&] {
    for (int r = 0; r < n; ++r)
      if (missing(r)) return r;
    return -1;
  };
  int waiting_for = first_missing();
  for (int i = 1; waiting_for >= 0 && i <= kPauseSpins; ++i) {
    shm::cpu_relax();
    if ((i & 15) == 0) waiting_for = first_missing();
  }
  const auto yield_until = std::chrono::steady_clock::now() + kYieldBudget;
  while (waiting_for >= 0 && std::chrono::steady_clock::now() < yield_until) {
    sched_yield();
    waiting_for = first_missing();
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (waiting_for >= 0) {
    header_->sleepers.fetch_add(1);
    const uint32_t rung = header_->bell.load();
    waiting_for = first_missing();
    if (waiting_for >= 0) shm::futex_wait(header_->bell, rung, kSleepSliceMs);
    header_->sleepers.fetch_sub(1);
    waiting_for = first_missing();
    if (waiting_for < 0) break;
    if (stop) {
      std::string why = stop();
      if (!why.empty()) throw unavailable(why);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string late;
      for (int r = 0; r < n; ++r)
        if (missing(r)) late += (late.empty() ? "" : ", ") + std::to_string(r);
      throw deadline_exceeded("shared-memory rendezvous call " + std::to_string(call) +
                              ": rank(s) " + late + " did not " + verb + " within " +
                              std::to_string(timeout.count()) + " ms");
    }
  }
}

void ShmRendezvous::ring_bell() {
  header_->bell.fetch_add(1, std::memory_order_acq_rel);
  if (header_->sleepers.load() > 0) shm::futex_wake(header_->bell);
}

uint64_t ShmRendezvous::post(int rank, const void* data, size_t bytes,
                             std::chrono::milliseconds timeout, const StopFn& stop) {
  const int n = ranks();
  if (rank < 0 || rank >= n)
    throw invalid_argument("shared-memory rendezvous: rank " + std::to_string(rank) + " of " +
                           std::to_string(n));
  if (bytes > slot_bytes())
    throw invalid_argument("shared-memory rendezvous: " + std::to_string(bytes) +
                           " bytes do not fit a slot of " + std::to_string(slot_bytes()));
  const uint64_t call = calls_ + 1;  // counted once posted: a post that failed can be retried
  const uint64_t depth_calls = uint64_t(depth());
  if (call > depth_calls) {
    // This rank's slot of `call` last held call - depth: every rank must be done reading it.
    const uint64_t previous = call - depth_calls;
    wait_for_ranks(
        [&](int r) { return state(r).released.load(std::memory_order_acquire) < previous; }, call,
        "release call " + std::to_string(previous), timeout, stop);
  }
  // An empty value still takes part (every rank makes the same calls); its data may be null.
  if (bytes > 0) std::memcpy(slot(call, rank), data, bytes);
  RankState& mine = state(rank);
  mine.bytes[call % depth_calls].store(bytes, std::memory_order_relaxed);
  mine.announced.store(call, std::memory_order_release);
  calls_ = call;
  ring_bell();
  return call;
}

std::vector<const char*> ShmRendezvous::collect(int rank, uint64_t call, size_t bytes,
                                                std::chrono::milliseconds timeout,
                                                const StopFn& stop) {
  const int n = ranks();
  wait_for_ranks([&](int r) { return state(r).announced.load(std::memory_order_acquire) < call; },
                 call, "arrive", timeout, stop);
  std::vector<const char*> slots(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    const uint64_t theirs =
        state(r).bytes[call % uint64_t(depth())].load(std::memory_order_relaxed);
    if (theirs != bytes)
      throw invalid_argument("shared-memory rendezvous call " + std::to_string(call) + ": rank " +
                             std::to_string(r) + " contributed " + std::to_string(theirs) +
                             " bytes, rank " + std::to_string(rank) + " " + std::to_string(bytes));
    slots[size_t(r)] = slot(call, r);
  }
  return slots;
}

void ShmRendezvous::release(int rank, uint64_t call) {
  RankState& mine = state(rank);
  if (mine.released.load(std::memory_order_relaxed) >= call) return;
  mine.released.store(call, std::memory_order_release);
  ring_bell();
}

std::vector<const char*> ShmRendezvous::exchange(int rank, const void* data, size_t bytes,
                                                 std::chrono::milliseconds timeout,
                                                 const StopFn& stop) {
  // Calling again means this rank is done with the slots of its previous call.
  if (calls_ > 0 && rank >= 0 && rank < ranks()) release(rank, calls_);
  const uint64_t call = post(rank, data, bytes, timeout, stop);
  return collect(rank, call, bytes, timeout, stop);
}

}  // namespace troupe
