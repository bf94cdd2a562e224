// `troupe bench merge-call`: microseconds per merge_call round (every replica parks at the
// barrier actor, the merge runs once, every replica resumes) for several replica counts.
#include <chrono>
#include <cstdio>
#include <sstream>

#include "bench/bench_table.hpp"
#include "bench/command_line.hpp"
#include "coordinator/mirrored_strategy.hpp"
#include "coordinator/runtime.hpp"

namespace po = boost::program_options;

namespace troupe {

int run_merge_call_bench(const std::vector<std::string>& args) {
  po::options_description options("troupe bench merge-call options");
  bool json = false;
  std::string replicas_text = "1,2,4";
  int rounds = 20000;
  options.add_options()("json", po::bool_switch(&json), "print one JSON object instead of a table")(
      "replicas", po::value(&replicas_text)->default_value(replicas_text),
      "comma-separated counts")("rounds", po::value(&rounds)->default_value(rounds),
                                "merge_calls per measurement");
  po::variables_map vm;
  if (!parse_command_line("troupe bench merge-call [--replicas 1,2,4] [--json]", args, options, vm))
    return 0;
  if (rounds < 1) throw po::error("--rounds must be >= 1");
  std::vector<int> counts;
  std::stringstream list(replicas_text);
  for (std::string item; std::getline(list, item, ',');) {
    int n = std::atoi(item.c_str());
    if (n < 1) throw po::error("--replicas: '" + item + "' is not a positive count");
    counts.push_back(n);
  }
  Runtime runtime;
  std::vector<std::pair<int, double>> results;
  for (int n : counts) {
    std::vector<std::string> devices;
    for (int i = 0; i < n; ++i) devices.push_back("CPU:" + std::to_string(i));
    MirroredStrategy strategy(runtime.system(), devices);
    auto noop = [](Strategy&, const std::vector<PerReplica>&) {
      return std::vector<DistributedValues>{};
    };
    auto step = [&](int k) {
      return [&, k](ReplicaContext& c, const std::vector<Tensor>&) {
        for (int i = 0; i < k; ++i) c.merge_call(noop);
        return std::vector<Tensor>{};
      };
    };
    strategy.run(step(100));  // warm-up
    auto start = std::chrono::steady_clock::now();
    strategy.run(step(rounds));
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    results.emplace_back(n, s / rounds * 1e6);
  }
  if (json) {
    std::printf("{\"results\":[");
    for (size_t i = 0; i < results.size(); ++i)
      std::printf("%s{\"replicas\":%d,\"us_per_round\":%.3f}", i ? "," : "", results[i].first,
                  results[i].second);
    std::printf("]}\n");
    return 0;
  }
  std::printf("%10s %14s\n", "replicas", "us_per_round");
  for (auto& [n, us] : results) std::printf("%10d %14.2f\n", n, us);
  return 0;
}

}  // namespace troupe
