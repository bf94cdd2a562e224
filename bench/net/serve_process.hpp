#pragma once
// A `troupe serve` child process: started with fork/exec of a troupe binary, its port read from
// the `PORT <n>` line it prints, stopped with SIGTERM when this handle goes away.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>

namespace troupe {

/// A running `troupe serve` process.
class ServeProcess {
 public:
  /// Starts `binary serve` with TROUPE_SECRET=`secret`; waits up to `timeout` for its PORT line.
  /// Throws unavailable naming the binary when it does not start or print a port in time.
  ServeProcess(const std::string& binary, const std::string& secret,
               std::chrono::milliseconds timeout);
  ~ServeProcess();
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  uint16_t port_ = 0;
};

/// Path of the running executable (/proc/self/exe), to start more troupe processes.
std::string current_executable();

}  // namespace troupe
