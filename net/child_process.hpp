#pragma once
// A child process started with fork/exec, its stdin, stdout and stderr on pipes. Every read and
// wait takes a deadline, so a dead or hung child is reported instead of blocking its parent.
// The one fork/exec of the project: the benchmarks' process groups, `troupe serve` children and
// the multi-process tests all start their processes here.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace troupe {

/// How a child is detached from its parent's terminal and life.
struct ChildProcessOptions {
  /// The child leads a process group of its own, so a terminal's Ctrl-C reaches only the parent
  /// (which forwards it once: `troupe launch`).
  bool own_process_group = false;
  /// Sent to the child when the parent dies (0: none), so no child outlives a killed parent.
  int parent_death_signal = 0;
};

/// A running child process; killed (SIGKILL) and reaped when the handle goes away unless it has
/// already been waited for.
class ChildProcess {
 public:
  /// Starts `binary args...`. `env` entries "K=V" are set in the child, "K=" removes K.
  /// Throws unavailable when the pipes or the fork fail; an exec failure exits the child with 127.
  ChildProcess(const std::string& binary, const std::vector<std::string>& args,
               const std::vector<std::string>& env = {}, const ChildProcessOptions& options = {});
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  /// Next stdout line (without '\n'), or nullopt at EOF or when `timeout` passes first.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);

  /// Reads what either pipe has until `timeout` passes or something arrives; false when
  /// nothing did (or both pipes are closed).
  bool pump_for(std::chrono::milliseconds timeout);
  /// The next complete line read from stdout / stderr (and the rest once the pipe is closed),
  /// without reading more; nullopt when there is none.
  std::optional<std::string> take_out_line();
  std::optional<std::string> take_err_line();
  /// Both output pipes are closed (the child exited or closed them).
  bool output_closed() const { return out_fd_ < 0 && err_fd_ < 0; }
  /// The exit code (or 128 + signal) when the child has exited, without waiting.
  std::optional<int> poll_exit();

  /// Writes `line` and a newline to the child's stdin; false when the child is gone.
  bool write_line(const std::string& line);

  /// Closes the child's stdin (it reads EOF).
  void close_stdin();

  /// Sends `sig` to the child.
  void signal(int sig);

  /// Waits until the child exits or `timeout` passes (then kills it and returns nullopt).
  /// Returns the exit code, or 128 + the signal that ended it.
  std::optional<int> wait(std::chrono::milliseconds timeout);

  /// Everything read from stdout / stderr so far that read_line has not returned.
  const std::string& out() const { return out_; }
  const std::string& err() const { return err_; }
  pid_t pid() const { return pid_; }

 private:
  bool pump(std::chrono::steady_clock::time_point deadline);

  pid_t pid_ = -1;
  int in_fd_ = -1, out_fd_ = -1, err_fd_ = -1;
  std::string out_, err_;
  std::optional<int> exit_code_;
};

/// Path of the running executable (/proc/self/exe), to start more troupe processes.
std::string current_executable();

}  // namespace troupe
