#pragma once
// How `troupe run` answers SIGINT and SIGTERM. The first signal asks the training loop to stop
// after its current chunk and checkpoint, and stderr says it was taken; the run then exits
// 128 + the signal (130, 143). A run that cannot reach that stop — still waiting for input after
// a grace period (a FIFO nobody writes, a dead mount) or still setting up — is abandoned:
// `abandon` says so and the process exits with that code at once, keeping the last checkpoint.
// A second signal exits at once.

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "experiment/run/experiment_runner.hpp"

namespace troupe::cli {

/// Installs the SIGINT/SIGTERM handlers for its lifetime (one instance per process).
class RunInterrupts {
 public:
  /// `command` ("troupe run") starts the line that acknowledges the first signal;
  /// `abandon(signal, phase)` prints why the run is given up after `grace` without reaching a
  /// stop; the process exits right after.
  RunInterrupts(std::string command, std::chrono::milliseconds grace,
                std::function<void(int, RunPhase)> abandon);
  /// Restores the default handlers and stops watching.
  ~RunInterrupts();
  RunInterrupts(const RunInterrupts&) = delete;
  RunInterrupts& operator=(const RunInterrupts&) = delete;

  /// For RunOptions::stop: set by the first signal.
  const std::atomic<bool>* stop() const;
  /// For RunOptions::phase: read when deciding whether to abandon the run.
  std::atomic<RunPhase>* phase() { return &phase_; }
  /// The first signal received (SIGINT, SIGTERM), or 0.
  int signal() const;

 private:
  void watch();

  std::string command_;
  std::chrono::milliseconds grace_;
  std::function<void(int, RunPhase)> abandon_;
  std::atomic<RunPhase> phase_{RunPhase::setup};
  std::thread watcher_;
};

/// The exit status of a process ended by `signal` (the shell's convention): 130, 143.
constexpr int exit_code_for_signal(int signal) { return 128 + signal; }

}  // namespace troupe::cli
