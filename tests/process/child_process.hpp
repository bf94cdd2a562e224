#pragma once
// A `troupe` child process for multi-process tests: fork/exec with captured stdout/stderr, line
// reads and exit waits that all take deadlines, so a dead or hung peer fails a test instead of
// hanging it.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace troupe::testing {

/// Path of the troupe binary built next to the tests.
inline std::string troupe_binary() { return std::string(TROUPE_BINARY_DIR) + "/troupe"; }

class ChildProcess {
 public:
  /// Starts `troupe args...`; `env` entries ("K=V") are added, "K=" removes K.
  ChildProcess(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
    ::signal(SIGPIPE, SIG_IGN);  // a dead child must fail write_line, not kill the test
    int in[2], out[2], err[2];
    if (::pipe(in) != 0 || ::pipe(out) != 0 || ::pipe(err) != 0) std::abort();
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::dup2(err[1], 2);
      ::close(in[0]);
      ::close(in[1]);
      ::close(out[0]);
      ::close(out[1]);
      ::close(err[0]);
      ::close(err[1]);
      for (const auto& e : env) {
        auto eq = e.find('=');
        if (eq + 1 == e.size())
          ::unsetenv(e.substr(0, eq).c_str());
        else
          ::setenv(e.substr(0, eq).c_str(), e.substr(eq + 1).c_str(), 1);
      }
      std::string bin = troupe_binary();
      std::vector<char*> argv{const_cast<char*>(bin.c_str())};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(bin.c_str(), argv.data());
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    in_fd_ = in[1];
    out_fd_ = out[0];
    err_fd_ = err[0];
  }
  ~ChildProcess() {
    if (pid_ > 0 && !exit_code_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (in_fd_ >= 0) ::close(in_fd_);
    if (out_fd_ >= 0) ::close(out_fd_);
    if (err_fd_ >= 0) ::close(err_fd_);
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  /// Next stdout line (without '\n'), or nullopt at EOF / deadline.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (out_.find('\n') == std::string::npos) {
      if (!pump(deadline)) return std::nullopt;
    }
    auto nl = out_.find('\n');
    std::string line = out_.substr(0, nl);
    out_.erase(0, nl + 1);
    return line;
  }

  /// Writes `line` and a newline to the child's stdin; false if the child is gone.
  bool write_line(const std::string& line) {
    std::string text = line + "\n";
    return in_fd_ >= 0 && ::write(in_fd_, text.data(), text.size()) == ssize_t(text.size());
  }

  /// Sends `signal` to the child.
  void signal(int sig) { ::kill(pid_, sig); }

  /// Waits until the child exits (its pipes close) or the deadline passes (then kills it and
  /// returns nullopt). Returns the exit code, or 128 + signal.
  std::optional<int> wait(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (out_fd_ >= 0 || err_fd_ >= 0) {
      if (!pump(deadline) && std::chrono::steady_clock::now() >= deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        exit_code_ = -1;
        return std::nullopt;
      }
    }
    int status = 0;
    ::waitpid(pid_, &status, 0);
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return exit_code_;
  }

  /// Everything read from stdout / stderr so far (complete after wait()).
  const std::string& out() const { return out_; }
  const std::string& err() const { return err_; }
  pid_t pid() const { return pid_; }

 private:
  // Reads whatever is available from either pipe; false when nothing came before the deadline
  // or both pipes are closed.
  bool pump(std::chrono::steady_clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || (out_fd_ < 0 && err_fd_ < 0)) return false;
    pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    if (::poll(fds, 2, int(left.count())) <= 0) return false;
    drain(fds[0], out_fd_, out_);
    drain(fds[1], err_fd_, err_);
    return true;
  }
  static void drain(const pollfd& p, int& fd, std::string& into) {
    if (fd < 0 || !(p.revents & (POLLIN | POLLHUP | POLLERR))) return;
    char buf[4096];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      into.append(buf, size_t(n));
    } else {
      ::close(fd);
      fd = -1;
    }
  }

  pid_t pid_ = -1;
  int in_fd_ = -1, out_fd_ = -1, err_fd_ = -1;
  std::string out_, err_;
  std::optional<int> exit_code_;
};

}  // namespace troupe::testing
