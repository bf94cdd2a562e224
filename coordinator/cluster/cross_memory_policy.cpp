#include "coordinator/cluster/cross_memory_policy.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/status.hpp"

namespace troupe {
namespace {

// Beyond L2 on the machines measured, as the values this path takes mostly are; small enough
// that measuring costs 2-3 ms once per process.
constexpr size_t kProbeBytes = size_t(4) << 20;
constexpr int kProbeRuns = 3;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

CrossMemoryRates measure() {
  std::vector<char> from(kProbeBytes, 1), to(kProbeBytes, 2);  // touched: no page faults timed
  double readv = 1e30, copy = 1e30;
  for (int run = 0; run < kProbeRuns; ++run) {
    auto start = std::chrono::steady_clock::now();
    for (size_t got = 0; got < kProbeBytes;) {
      iovec mine{to.data() + got, kProbeBytes - got}, theirs{from.data() + got, kProbeBytes - got};
      const ssize_t n = ::process_vm_readv(::getpid(), &mine, 1, &theirs, 1, 0);
      if (n <= 0) return {};  // not permitted here (a seccomp filter): the path is out anyway
      got += size_t(n);
    }
    readv = std::min(readv, seconds_since(start));
    start = std::chrono::steady_clock::now();
    std::memcpy(to.data(), from.data(), kProbeBytes);
    asm volatile("" : : "r"(to.data()) : "memory");  // the copy is not dead: keep it timed
    copy = std::min(copy, seconds_since(start));
  }
  CrossMemoryRates rates;
  rates.readv_gbps = double(kProbeBytes) / readv / 1e9;
  rates.memcpy_gbps = double(kProbeBytes) / copy / 1e9;
  rates.pays = readv <= kCrossMemoryMaxSlowdown * copy;
  return rates;
}

}  // namespace

CrossMemoryPolicy parse_cross_memory_policy(const std::string& text, const std::string& flag) {
  if (text == "auto") return CrossMemoryPolicy::automatic;
  if (text == "on") return CrossMemoryPolicy::on;
  if (text == "off") return CrossMemoryPolicy::off;
  throw invalid_argument(flag + " must be auto, on or off, got '" + text + "'");
}

const CrossMemoryRates& cross_memory_rates() {
  static const CrossMemoryRates rates = measure();
  return rates;
}

bool cross_memory_allowed(CrossMemoryPolicy policy) {
  return policy == CrossMemoryPolicy::on ||
         (policy == CrossMemoryPolicy::automatic && cross_memory_rates().pays);
}

std::string describe_cross_memory(CrossMemoryPolicy policy) {
  // Measures only where the text depends on it.
  static const CrossMemoryRates unmeasured;
  return describe_cross_memory(
      policy, policy == CrossMemoryPolicy::automatic ? cross_memory_rates() : unmeasured);
}

std::string describe_cross_memory(CrossMemoryPolicy policy, const CrossMemoryRates& r) {
  if (policy != CrossMemoryPolicy::automatic) return policy == CrossMemoryPolicy::on ? "on" : "off";
  if (r.readv_gbps <= 0) return "auto: process_vm_readv is not permitted here, so the pieces";
  char text[160];
  std::snprintf(text, sizeof text, "auto: process_vm_readv %.1f GB/s, memcpy %.1f GB/s here, so %s",
                r.readv_gbps, r.memcpy_gbps, r.pays ? "the cross-memory path" : "the pieces");
  return text;
}

}  // namespace troupe
