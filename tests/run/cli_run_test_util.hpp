#pragma once
// Helpers for the `troupe run` process tests: an experiment file in a fresh directory, lines
// read with a deadline, and the "resume with:" command split back into arguments.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tests/process/child_process.hpp"

namespace troupe::testing {

/// A fresh empty directory under the temp dir, unique to this process and `name`.
inline std::filesystem::path fresh_run_test_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("troupe-cli-run-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// A small MLP on synthetic data, logging every 10 steps, one step per strategy.run: fast steps,
/// so a signal lands between steps early in the run.
inline std::string small_experiment(int64_t steps) {
  return "name: small\nseed: 1\nstrategy: {kind: mirrored, devices: [CPU:0, CPU:1]}\n"
         "model: {kind: mlp, input_dim: 32, hidden: [64], classes: 4}\n"
         "data: {kind: synthetic_classification, examples: 4096, global_batch: 64}\n"
         "optimizer: {kind: sgd, learning_rate: 0.05}\n"
         "train: {steps: " +
         std::to_string(steps) + ", log_every: 10, steps_per_execution: 1}\n";
}

/// Writes `text` to `path`; returns the path as a string.
inline std::string write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path.string();
}

/// Reads stdout lines until one starts with `prefix` (returned) or `timeout` passes.
inline std::optional<std::string> read_line_starting(TroupeProcess& p, const std::string& prefix,
                                                     std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    auto line = p.read_line(left);
    if (!line) return std::nullopt;
    if (line->rfind(prefix, 0) == 0) return line;
  }
  return std::nullopt;
}

/// Reads stderr lines until one contains `text` (returned) or `timeout` passes. The lines read
/// leave p.err().
inline std::optional<std::string> read_err_line_containing(TroupeProcess& p,
                                                           const std::string& text,
                                                           std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    while (auto line = p.take_err_line())
      if (line->find(text) != std::string::npos) return line;
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline || p.output_closed()) return std::nullopt;
    p.pump_for(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now));
  }
}

/// The arguments after "troupe" of a printed "resume with: troupe run ..." line (the tests' paths
/// need no shell quoting).
inline std::vector<std::string> resume_args(const std::string& line) {
  const std::string marker = "resume with: troupe ";
  auto at = line.find(marker);
  if (at == std::string::npos) return {};
  std::istringstream words(line.substr(at + marker.size()));
  std::vector<std::string> args;
  for (std::string w; words >> w;) args.push_back(w);
  return args;
}

}  // namespace troupe::testing
