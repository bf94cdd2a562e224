#include "cli/run_interrupts.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>

namespace troupe::cli {
namespace {

using Clock = std::chrono::steady_clock;

// A signal handler reaches only static storage and async-signal-safe calls: it records the
// signal, sets the stop flag and wakes the watcher thread through a pipe.
std::atomic<bool> stop_requested{false};
std::atomic<int> first_signal{0};
std::atomic<int> signal_count{0};
int wake_pipe[2] = {-1, -1};

constexpr char kQuit = 'q';

extern "C" void on_signal(int sig) {
  int saved_errno = errno;
  if (signal_count.fetch_add(1) > 0) {
    // The second signal: the user does not want to wait for the step or the checkpoint.
    const char msg[] = "\ntroupe run: second signal, exiting at once\n";
    (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(exit_code_for_signal(sig));
  }
  first_signal.store(sig);
  stop_requested.store(true);
  char byte = char(sig);
  (void)!::write(wake_pipe[1], &byte, 1);
  errno = saved_errno;
}

}  // namespace

RunInterrupts::RunInterrupts(std::string command, std::chrono::milliseconds grace,
                             std::function<void(int, RunPhase)> abandon)
    : command_(std::move(command)), grace_(grace), abandon_(std::move(abandon)) {
  if (::pipe(wake_pipe) != 0)
    throw std::runtime_error("pipe: " + std::string(std::strerror(errno)));
  watcher_ = std::thread([this] { watch(); });
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

RunInterrupts::~RunInterrupts() {
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  (void)!::write(wake_pipe[1], &kQuit, 1);
  watcher_.join();
  ::close(wake_pipe[0]);
  ::close(wake_pipe[1]);
}

const std::atomic<bool>* RunInterrupts::stop() const { return &stop_requested; }

int RunInterrupts::signal() const { return first_signal.load(); }

void RunInterrupts::watch() {
  std::optional<Clock::time_point> since;  // when the first signal arrived
  for (;;) {
    pollfd fd{wake_pipe[0], POLLIN, 0};
    int ready = ::poll(&fd, 1, since ? 20 : -1);
    if (ready > 0) {
      char byte = 0;
      if (::read(wake_pipe[0], &byte, 1) == 1 && byte == kQuit) return;
      if (!since) {
        since = Clock::now();
        // Said once the handler has counted the signal: a signal sent after this line is the
        // second one, never merged with the first.
        const int sig = first_signal.load();
        std::fprintf(stderr,
                     "%s: %s received, stopping after the current step (a second signal exits "
                     "at once)\n",
                     command_.c_str(), sig == SIGTERM ? "SIGTERM" : "SIGINT");
        std::fflush(stderr);
      }
    }
    if (!since || Clock::now() - *since < grace_) continue;
    // A step or a checkpoint ends by itself; input that has not come in the grace period may
    // never come, and setting up has nothing to save.
    RunPhase phase = phase_.load();
    if (phase == RunPhase::waiting_for_input || phase == RunPhase::setup) {
      abandon_(first_signal.load(), phase);
      std::fflush(nullptr);
      std::_Exit(exit_code_for_signal(first_signal.load()));
    }
  }
}

}  // namespace troupe::cli
