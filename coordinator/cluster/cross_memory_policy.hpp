#pragma once
// Whether large all-reduces between the processes of one host read each other's memory
// (coordinator/cluster/cross_memory_all_reduce.hpp) or go through the shared-memory rendezvous
// in pieces. Which is faster depends on the host's kernel: process_vm_readv ran at 0.28-0.33x
// memcpy's rate on one 2-vCPU VM and close enough to it on another for the cross-memory path to
// win (docs/benchmarks.md), so by default each process measures it once and decides.

#include <string>

namespace troupe {

/// Which path large all-reduces between the processes of one host take (--cross-memory): the
/// cross-memory one wherever every rank can read the others (on), never (off), or where it also
/// pays on this host (automatic, "auto"): see cross_memory_rates().
enum class CrossMemoryPolicy { off, on, automatic };
/// "auto", "on" or "off"; throws invalid_argument naming `flag` otherwise.
CrossMemoryPolicy parse_cross_memory_policy(const std::string& text, const std::string& flag);

/// The rates this process measured, once, on first use: its kernel's process_vm_readv (of its
/// own memory, the same path as another process's) against memcpy, 4 MiB each, the best of
/// three alternated runs. The pieces move about 2.5 memcpys of the value per rank, this path one
/// value through process_vm_readv plus about 0.75 of a memcpy: it pays while process_vm_readv
/// takes at most kCrossMemoryMaxSlowdown times memcpy's time (docs/benchmarks.md has the figures
/// it comes from).
struct CrossMemoryRates {
  double readv_gbps = 0;
  double memcpy_gbps = 0;
  bool pays = false;
};
constexpr double kCrossMemoryMaxSlowdown = 2.5;
const CrossMemoryRates& cross_memory_rates();
/// Whether this rank offers the cross-memory path under `policy`.
bool cross_memory_allowed(CrossMemoryPolicy policy);
/// How the log names the choice: "on", "off" or "auto: process_vm_readv X GB/s, memcpy Y GB/s
/// here, so <the cross-memory path | the pieces>" (with this process's rates, or `rates`);
/// "auto: process_vm_readv is not permitted here, so the pieces" when it failed.
std::string describe_cross_memory(CrossMemoryPolicy policy);
std::string describe_cross_memory(CrossMemoryPolicy policy, const CrossMemoryRates& rates);

}  // namespace troupe
