#include "net/shm_ring.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <random>

#include "core/status.hpp"
#include "net/shm_futex.hpp"

namespace troupe {

struct ShmRing::Control {
  alignas(64) std::atomic<uint64_t> head;  // bytes written (writer's)
  std::atomic<uint32_t> head_seq;          // futex word: bumped on every publish
  std::atomic<uint32_t> reader_waiting;
  alignas(64) std::atomic<uint64_t> tail;  // bytes consumed (reader's)
  std::atomic<uint32_t> tail_seq;          // futex word: bumped on every consume
  std::atomic<uint32_t> writer_waiting;
  alignas(64) std::atomic<uint32_t> closed;
  uint64_t capacity;
};

namespace {

constexpr size_t kControlBytes = 4096;
constexpr size_t kPublishEvery = 256 << 10;  // lets the reader start before a 1 MiB chunk ends
constexpr int kSleepSliceMs = 20;            // how often a sleeping side checks `alive`
using shm::cpu_relax;
using shm::futex_wait;
using shm::futex_wake;

/// Waits until `ready()`: spins briefly (the peer usually is mid-copy), yields, then sleeps on
/// `seq` in slices, checking `closed` and `alive` after each.
template <class Ready>
RingIo wait_for(std::atomic<uint32_t>& seq, std::atomic<uint32_t>& waiting,
                std::atomic<uint32_t>& closed, Ready ready, int timeout_ms, bool idle_ok,
                const ShmRing::AliveFn& alive) {
  for (int i = 0; i < 256; ++i) {
    if (ready()) return RingIo::ok;
    cpu_relax();
  }
  for (int i = 0; i < 16; ++i) {
    if (ready()) return RingIo::ok;
    sched_yield();
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    waiting.store(1);
    uint32_t seen = seq.load();
    if (ready()) {
      waiting.store(0);
      return RingIo::ok;
    }
    if (closed.load()) {
      waiting.store(0);
      return RingIo::closed;
    }
    futex_wait(seq, seen, kSleepSliceMs);
    waiting.store(0);
    if (ready()) return RingIo::ok;
    if (closed.load() || (alive && !alive())) return RingIo::closed;
    if (std::chrono::steady_clock::now() >= deadline)
      return idle_ok ? RingIo::idle : RingIo::stalled;
  }
}

}  // namespace

ShmRing ShmRing::create(size_t capacity) {
  std::random_device entropy;
  char name[64];
  std::snprintf(name, sizeof name, "/troupe-cdata-%08x%08x", entropy(), entropy());
  int fd = ::shm_open(name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0)
    throw unavailable(std::string("cannot create shared-memory segment ") + name + ": " +
                      strerror(errno));
  ShmRing ring;
  ring.name_ = name;
  ring.linked_ = true;
  ring.map(fd, true, capacity);
  return ring;
}

ShmRing ShmRing::open(const std::string& name) {
  int fd = ::shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0)
    throw unavailable("cannot open shared-memory segment " + name + ": " + strerror(errno));
  ShmRing ring;
  ring.name_ = name;
  ring.map(fd, false, 0);
  return ring;
}

void ShmRing::map(int fd, bool create, size_t capacity) {
  size_t bytes = kControlBytes + capacity;
  // Reserve the pages now: a sparse segment on a full /dev/shm (64 MiB in a default container)
  // would kill the process with SIGBUS at the first write instead of failing here, where the
  // data plane falls back to TCP.
  int reserved = create ? ::posix_fallocate(fd, 0, off_t(bytes)) : 0;
  if (reserved != 0) {
    ::close(fd);
    ::shm_unlink(name_.c_str());
    linked_ = false;
    throw unavailable("cannot reserve " + std::to_string(bytes) +
                      " bytes for shared-memory segment " + name_ + ": " + strerror(reserved));
  }
  if (!create) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || size_t(st.st_size) <= kControlBytes) {
      ::close(fd);
      throw unavailable("shared-memory segment " + name_ + " is too small");
    }
    bytes = size_t(st.st_size);
  }
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  std::string why = p == MAP_FAILED ? strerror(errno) : "";
  ::close(fd);
  if (p == MAP_FAILED) throw unavailable("cannot map shared-memory segment " + name_ + ": " + why);
  mapped_ = bytes;
  control_ = static_cast<Control*>(p);
  data_ = static_cast<char*>(p) + kControlBytes;
  if (create) control_->capacity = capacity;  // the zero-filled counters are already valid
  capacity_ = size_t(control_->capacity);
  if (capacity_ != bytes - kControlBytes)
    throw unavailable("shared-memory segment " + name_ + " declares " + std::to_string(capacity_) +
                      " bytes but maps " + std::to_string(bytes - kControlBytes));
}

ShmRing::ShmRing(ShmRing&& other) noexcept { *this = std::move(other); }

ShmRing& ShmRing::operator=(ShmRing&& other) noexcept {
  std::swap(name_, other.name_);
  std::swap(control_, other.control_);
  std::swap(data_, other.data_);
  std::swap(capacity_, other.capacity_);
  std::swap(mapped_, other.mapped_);
  std::swap(linked_, other.linked_);
  return *this;
}

ShmRing::~ShmRing() {
  unlink();
  if (control_) ::munmap(control_, mapped_);
}

void ShmRing::unlink() {
  if (linked_) ::shm_unlink(name_.c_str());
  linked_ = false;
}

void ShmRing::close() {
  if (!control_) return;
  control_->closed.store(1);
  control_->head_seq.fetch_add(1);
  control_->tail_seq.fetch_add(1);
  futex_wake(control_->head_seq);
  futex_wake(control_->tail_seq);
}

RingIo ShmRing::write(const void* data, size_t size, int timeout_ms, const AliveFn& alive) {
  auto& c = *control_;
  auto p = static_cast<const char*>(data);
  uint64_t head = c.head.load(std::memory_order_relaxed);
  while (size > 0) {
    uint64_t tail = c.tail.load(std::memory_order_acquire);
    if (head - tail == capacity_) {
      RingIo r = wait_for(
          c.tail_seq, c.writer_waiting, c.closed,
          [&] { return c.tail.load(std::memory_order_acquire) != tail; }, timeout_ms, false, alive);
      if (r != RingIo::ok) return r;
      continue;
    }
    size_t n = std::min({size, size_t(capacity_ - (head - tail)), kPublishEvery});
    size_t offset = size_t(head % capacity_), first = std::min(n, capacity_ - offset);
    std::memcpy(data_ + offset, p, first);
    std::memcpy(data_, p + first, n - first);
    head += n;
    p += n;
    size -= n;
    c.head.store(head);
    c.head_seq.fetch_add(1);
    if (c.reader_waiting.load()) futex_wake(c.head_seq);
  }
  return RingIo::ok;
}

bool ShmRing::try_write(const void* a, size_t a_size, const void* b, size_t b_size) {
  auto& c = *control_;
  uint64_t head = c.head.load(std::memory_order_relaxed);
  uint64_t tail = c.tail.load(std::memory_order_acquire);
  if (capacity_ - (head - tail) < a_size + b_size) return false;
  for (auto [p, n] : {std::pair<const char*, size_t>{static_cast<const char*>(a), a_size},
                      std::pair<const char*, size_t>{static_cast<const char*>(b), b_size}}) {
    size_t offset = size_t(head % capacity_), first = std::min(n, capacity_ - offset);
    std::memcpy(data_ + offset, p, first);
    std::memcpy(data_, p + first, n - first);
    head += n;
  }
  c.head.store(head);
  c.head_seq.fetch_add(1);
  if (c.reader_waiting.load()) futex_wake(c.head_seq);
  return true;
}

RingIo ShmRing::read(void* data, size_t size, int timeout_ms, bool idle_ok, const AliveFn& alive) {
  auto& c = *control_;
  auto p = static_cast<char*>(data);
  uint64_t tail = c.tail.load(std::memory_order_relaxed);
  bool any = false;
  while (size > 0) {
    uint64_t head = c.head.load(std::memory_order_acquire);
    if (head == tail) {
      RingIo r = wait_for(
          c.head_seq, c.reader_waiting, c.closed,
          [&] { return c.head.load(std::memory_order_acquire) != tail; }, timeout_ms,
          idle_ok && !any, alive);
      if (r != RingIo::ok) return r;
      continue;
    }
    size_t n = std::min(size, size_t(head - tail));
    size_t offset = size_t(tail % capacity_), first = std::min(n, capacity_ - offset);
    std::memcpy(p, data_ + offset, first);
    std::memcpy(p + first, data_, n - first);
    tail += n;
    p += n;
    size -= n;
    any = true;
    c.tail.store(tail);
    c.tail_seq.fetch_add(1);
    if (c.writer_waiting.load()) futex_wake(c.tail_seq);
  }
  return RingIo::ok;
}

}  // namespace troupe
