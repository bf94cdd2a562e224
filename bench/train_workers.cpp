#include "bench/train_workers.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "core/status.hpp"
#include "net/child_process.hpp"

namespace troupe {
namespace {

namespace fs = std::filesystem;

std::string experiment(const std::string& strategy, int steps, const fs::path& run_dir) {
  return "name: bench-train-workers\nseed: 1\nstrategy: " + strategy +
         "\nmodel: {kind: mlp, input_dim: 784, hidden: [256], classes: 10}\n"
         "data: {kind: synthetic_classification, examples: 8192, global_batch: 256, "
         "auto_shard: data}\n"
         "optimizer: {kind: sgd, learning_rate: 0.01}\n"
         "train: {steps: " +
         std::to_string(steps) + ", log_every: 0, checkpoint_dir: " + run_dir.string() + "}\n";
}

// Runs `troupe args...` to the end; returns the examples/s of its (chief's) summary line.
double examples_per_second(const std::vector<std::string>& args) {
  ChildProcess p(current_executable(), args);
  std::string out;
  while (auto line = p.read_line(std::chrono::minutes(10))) out += *line + "\n";
  auto code = p.wait(std::chrono::minutes(1));
  if (code != 0)
    throw internal_error("bench train --workers: `troupe " + args.at(0) + "` exited with " +
                         (code ? std::to_string(*code) : "a timeout") + ":\n" + out + p.err());
  std::smatch m;
  static const std::regex finished(R"(finished at step \d+: loss [^,]+, (?:accuracy [^,]+, )?)"
                                   R"(([0-9.]+) examples/s)");
  if (!std::regex_search(out, m, finished))
    throw internal_error("bench train --workers: no summary line in:\n" + out);
  return std::stod(m[1]);
}

}  // namespace

int run_train_workers_comparison(int workers, int steps, int rounds, bool json) {
  const fs::path dir =
      fs::temp_directory_path() / ("troupe-bench-workers-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string devices;
  for (int i = 0; i < workers; ++i) devices += (i ? ", CPU:" : "CPU:") + std::to_string(i);
  const std::string multi = (dir / "multi.yaml").string(), local = (dir / "local.yaml").string();
  std::ofstream(multi) << experiment("{kind: multi_worker_mirrored, devices: [CPU:0]}", steps,
                                     dir / "multi");
  std::ofstream(local) << experiment("{kind: mirrored, devices: [" + devices + "]}", steps,
                                     dir / "local");
  double best_processes = 0, best_tls = 0, best_threads = 0;
  try {
    for (int r = 0; r < rounds; ++r) {
      // Rounds interleave, so a burst of load from a neighbour hits every configuration alike.
      best_processes =
          std::max(best_processes, examples_per_second({"launch", "-n", std::to_string(workers),
                                                        "--no-tls", multi, "--overwrite"}));
      best_tls = std::max(best_tls, examples_per_second({"launch", "-n", std::to_string(workers),
                                                         multi, "--overwrite"}));
      best_threads = std::max(best_threads, examples_per_second({"run", local, "--overwrite"}));
    }
  } catch (...) {
    fs::remove_all(dir);
    throw;
  }
  fs::remove_all(dir);
  if (json) {
    std::printf(
        "{\"benchmark\":\"train_workers\",\"workers\":%d,\"steps\":%d,\"global_batch\":256,"
        "\"processes_examples_per_s\":%.0f,\"processes_tls_examples_per_s\":%.0f,"
        "\"one_process_examples_per_s\":%.0f,\"ratio\":%.3f,\"ratio_tls\":%.3f}\n",
        workers, steps, best_processes, best_tls, best_threads, best_processes / best_threads,
        best_tls / best_threads);
    return 0;
  }
  std::printf(
      "MLP 784-256-10, global batch 256, %d steps through `troupe run` / `troupe launch`, "
      "best of %d interleaved rounds\n",
      steps, rounds);
  std::printf("%-44s %14s %8s\n", "configuration", "examples/s", "ratio");
  std::printf("%-44s %14.0f %8s\n",
              ("1 process x " + std::to_string(workers) + " replicas (mirrored)").c_str(),
              best_threads, "1.000");
  std::printf("%-44s %14.0f %8.3f\n",
              (std::to_string(workers) + " processes x 1 replica (plain + secret)").c_str(),
              best_processes, best_processes / best_threads);
  std::printf("%-44s %14.0f %8.3f\n",
              (std::to_string(workers) + " processes x 1 replica (mutual TLS)").c_str(), best_tls,
              best_tls / best_threads);
  return 0;
}

}  // namespace troupe
