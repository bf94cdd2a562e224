#include "bench/net/serve_process.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/status.hpp"

namespace troupe {

std::string current_executable() {
  char path[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) throw unavailable("cannot resolve /proc/self/exe");
  return std::string(path, size_t(n));
}

ServeProcess::ServeProcess(const std::string& binary, const std::string& secret,
                           std::chrono::milliseconds timeout) {
  int out[2];
  if (::pipe(out) != 0) throw unavailable("pipe failed: " + std::string(strerror(errno)));
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::close(out[0]);
    ::close(out[1]);
    ::setenv("TROUPE_SECRET", secret.c_str(), 1);
    ::execl(binary.c_str(), binary.c_str(), "serve", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (text.find('\n') == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{out[0], POLLIN, 0};
    char buf[256];
    ssize_t n = 0;
    if (left.count() <= 0 || ::poll(&p, 1, int(left.count())) <= 0 ||
        (n = ::read(out[0], buf, sizeof buf)) <= 0)
      break;
    text.append(buf, size_t(n));
  }
  ::close(out[0]);
  if (text.rfind("PORT ", 0) != 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    throw unavailable("'" + binary + " serve' printed no PORT line (got '" + text + "')");
  }
  port_ = uint16_t(std::atoi(text.c_str() + 5));
}

ServeProcess::~ServeProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }
}

}  // namespace troupe
