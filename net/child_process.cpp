#include "net/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "core/status.hpp"

namespace troupe {
namespace {

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Appends what one ready pipe holds to `into`; closes the pipe at EOF or error.
void drain(const pollfd& p, int& fd, std::string& into) {
  if (fd < 0 || !(p.revents & (POLLIN | POLLHUP | POLLERR))) return;
  char buf[4096];
  ssize_t n = ::read(fd, buf, sizeof buf);
  if (n > 0)
    into.append(buf, size_t(n));
  else
    close_fd(fd);
}

}  // namespace

ChildProcess::ChildProcess(const std::string& binary, const std::vector<std::string>& args,
                           const std::vector<std::string>& env,
                           const ChildProcessOptions& options) {
  // A dead child must fail write_line, not kill the parent.
  ::signal(SIGPIPE, SIG_IGN);
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
    throw unavailable("cannot start '" + binary + "': pipe failed: " + std::strerror(errno));
  // Built before fork: the child only calls async-signal-safe functions.
  std::vector<char*> argv{const_cast<char*>(binary.c_str())};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ < 0) throw unavailable("cannot start '" + binary + "': fork failed");
  if (pid_ == 0) {
    if (options.own_process_group) ::setpgid(0, 0);
    if (options.parent_death_signal != 0) ::prctl(PR_SET_PDEATHSIG, options.parent_death_signal);
    ::dup2(in[0], STDIN_FILENO);
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    for (const auto& e : env) {
      auto eq = e.find('=');
      if (eq == std::string::npos) continue;
      if (eq + 1 == e.size())
        ::unsetenv(e.substr(0, eq).c_str());
      else
        ::setenv(e.substr(0, eq).c_str(), e.substr(eq + 1).c_str(), 1);
    }
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  in_fd_ = in[1];
  out_fd_ = out[0];
  err_fd_ = err[0];
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !exit_code_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  close_fd(in_fd_);
  close_fd(out_fd_);
  close_fd(err_fd_);
}

std::optional<std::string> ChildProcess::read_line(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (out_.find('\n') == std::string::npos) {
    if (!pump(deadline)) return std::nullopt;
  }
  auto nl = out_.find('\n');
  std::string line = out_.substr(0, nl);
  out_.erase(0, nl + 1);
  return line;
}

bool ChildProcess::pump_for(std::chrono::milliseconds timeout) {
  return pump(std::chrono::steady_clock::now() + timeout);
}

namespace {

std::optional<std::string> take_line(std::string& buffer, bool closed) {
  auto nl = buffer.find('\n');
  if (nl == std::string::npos) {
    if (!closed || buffer.empty()) return std::nullopt;
    nl = buffer.size();
  }
  std::string line = buffer.substr(0, nl);
  buffer.erase(0, std::min(buffer.size(), nl + 1));
  return line;
}

}  // namespace

std::optional<std::string> ChildProcess::take_out_line() { return take_line(out_, out_fd_ < 0); }
std::optional<std::string> ChildProcess::take_err_line() { return take_line(err_, err_fd_ < 0); }

std::optional<int> ChildProcess::poll_exit() {
  if (exit_code_) return exit_code_;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return std::nullopt;
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return exit_code_;
}

bool ChildProcess::write_line(const std::string& line) {
  std::string text = line + "\n";
  return in_fd_ >= 0 && ::write(in_fd_, text.data(), text.size()) == ssize_t(text.size());
}

void ChildProcess::close_stdin() { close_fd(in_fd_); }

void ChildProcess::signal(int sig) {
  if (pid_ > 0 && !exit_code_) ::kill(pid_, sig);
}

std::optional<int> ChildProcess::wait(std::chrono::milliseconds timeout) {
  if (exit_code_) return exit_code_;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  // Output first: a child blocked on a full pipe would never exit.
  while (out_fd_ >= 0 || err_fd_ >= 0) {
    if (!pump(deadline) && std::chrono::steady_clock::now() >= deadline) break;
  }
  int status = 0;
  for (;;) {
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) break;
    if (r < 0 || std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      exit_code_ = -1;
      return std::nullopt;
    }
    ::usleep(1000);
  }
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return exit_code_;
}

// Reads whatever is available from either pipe; false when nothing came before the deadline or
// both pipes are closed.
bool ChildProcess::pump(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0 || (out_fd_ < 0 && err_fd_ < 0)) return false;
  pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
  if (::poll(fds, 2, int(left.count())) <= 0) return false;
  drain(fds[0], out_fd_, out_);
  drain(fds[1], err_fd_, err_);
  return true;
}

std::string current_executable() {
  char path[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) throw unavailable("cannot resolve /proc/self/exe");
  return std::string(path, size_t(n));
}

}  // namespace troupe
