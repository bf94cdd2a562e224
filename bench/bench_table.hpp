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

/// Every benchmark, in help order.
inline constexpr BenchmarkEntry kBenchmarks[] = {
    {"wire", "memcpy, raw TCP and middleman tensor throughput between two processes",
     run_wire_bench},
};

}  // namespace troupe
