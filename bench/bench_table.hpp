#pragma once
// The benchmarks `troupe bench <name>` can run. Adding one = bench/<name>.cpp with a
// `int run_<name>_bench(const std::vector<std::string>& args)` + one line in kBenchmarks.

#include <string>
#include <vector>

namespace troupe {

/// One benchmark: its name on the command line, a one-line summary, its entry point.
struct BenchmarkEntry {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);  ///< returns the process exit code
};

/// memcpy vs raw TCP vs middleman tensor throughput between two processes.
int run_wire_bench(const std::vector<std::string>& args);

/// All-reduce time / algbw / busbw in process (replica threads) or across processes.
int run_allreduce_bench(const std::vector<std::string>& args);
/// Microseconds per merge_call round.
int run_merge_call_bench(const std::vector<std::string>& args);
/// MLP training examples/s on 1 and 2 CPU replicas vs an sgemm-derived limit.
int run_train_bench(const std::vector<std::string>& args);
/// TFRecord Example records/s: raw read vs parse loop vs distributed pipeline.
int run_input_bench(const std::vector<std::string>& args);

/// Dense pull/push GB/s and sparse embedding rows/s against `troupe server --job ps` processes.
int run_ps_bench(const std::vector<std::string>& args);

/// Every benchmark, in help order.
inline constexpr BenchmarkEntry kBenchmarks[] = {
    {"wire", "memcpy, raw TCP and middleman tensor throughput between two processes",
     run_wire_bench},
    {"allreduce", "all-reduce algbw/busbw vs memcpy (in process) or raw TCP (--processes N)",
     run_allreduce_bench},
    {"merge-call", "microseconds per merge_call round for 1, 2, 4 replicas", run_merge_call_bench},
    {"train", "MLP 784-256-10 examples/s on 1 and 2 CPU replicas vs an sgemm limit",
     run_train_bench},
    {"input", "TFRecord records/s: raw read, parse loop, distributed pipeline", run_input_bench},
    {"ps", "parameter servers: dense pull/push GB/s, sparse rows/s, vs raw TCP", run_ps_bench},
};

}  // namespace troupe
