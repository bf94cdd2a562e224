#include "bench/process_group.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <sstream>

#include "core/status.hpp"

namespace troupe {
namespace {

struct Child {
  pid_t pid = -1;
  int in = -1, out = -1;
  std::string buffer;
};

Child spawn(const std::string& binary, const std::vector<std::string>& args,
            const std::string& secret) {
  int in[2], out[2];
  if (::pipe(in) != 0 || ::pipe(out) != 0) throw unavailable("pipe failed");
  Child c;
  c.pid = ::fork();
  if (c.pid < 0) throw unavailable("fork failed");
  if (c.pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::close(in[0]);
    ::close(in[1]);
    ::close(out[0]);
    ::close(out[1]);
    ::setenv("TROUPE_SECRET", secret.c_str(), 1);
    std::vector<char*> argv{const_cast<char*>(binary.c_str())};
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  c.in = in[1];
  c.out = out[0];
  return c;
}

/// Next line from the child, or "" once `deadline` passed or the child closed stdout.
std::string read_line(Child& c, std::chrono::steady_clock::time_point deadline) {
  while (c.buffer.find('\n') == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    pollfd p{c.out, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, int(left)) <= 0) return "";
    char chunk[4096];
    ssize_t n = ::read(c.out, chunk, sizeof chunk);
    if (n <= 0) return "";
    c.buffer.append(chunk, size_t(n));
  }
  auto nl = c.buffer.find('\n');
  std::string line = c.buffer.substr(0, nl);
  c.buffer.erase(0, nl + 1);
  return line;
}

void write_line(Child& c, const std::string& line) {
  std::string text = line + "\n";
  if (::write(c.in, text.data(), text.size()) < 0) {
    // The child died; its missing RESULT line reports it.
  }
}

}  // namespace

std::vector<RankReport> run_collective_processes(const std::string& binary, int ranks,
                                                 const std::vector<std::string>& peer_args,
                                                 const std::string& secret, int timeout_s) {
  ::signal(SIGPIPE, SIG_IGN);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  std::vector<Child> children;
  std::string peers = "PEERS";
  for (int r = 0; r < ranks; ++r) {
    std::vector<std::string> args{"collective-peer", "--rank", std::to_string(r), "--size",
                                  std::to_string(ranks)};
    args.insert(args.end(), peer_args.begin(), peer_args.end());
    children.push_back(spawn(binary, args, secret));
    std::string port = read_line(children.back(), deadline);
    if (port.rfind("PORT ", 0) != 0) {
      for (auto& c : children) ::kill(c.pid, SIGKILL);
      throw unavailable("rank " + std::to_string(r) + " did not report its port");
    }
    peers += " " + port.substr(5);
  }
  for (auto& c : children) write_line(c, peers);
  std::vector<RankReport> reports;
  for (auto& c : children) {
    RankReport report;
    report.line = read_line(c, deadline);
    std::istringstream in(report.line);
    std::string tag, status;
    in >> tag >> status >> report.seconds_per_all_reduce >> report.checksum;
    report.ok = tag == "RESULT" && status == "ok";
    if (report.line.empty()) report.line = "no RESULT line before the deadline";
    reports.push_back(report);
  }
  for (auto& c : children) write_line(c, "EXIT");
  for (auto& c : children) {
    ::close(c.in);
    // Ranks exit on EXIT; anything still alive at the deadline is killed.
    int status = 0;
    while (::waitpid(c.pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(c.pid, SIGKILL);
        ::waitpid(c.pid, &status, 0);
        break;
      }
      ::usleep(1000);
    }
    ::close(c.out);
  }
  return reports;
}

}  // namespace troupe
