// `troupe serve`: publish a gatekeeper-guarded tensor service on 127.0.0.1 (or --bind, with a
// warning when that is not loopback), print `PORT <n>`, serve until SIGINT/SIGTERM.
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <iostream>

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>

#include "actors/tensor_service.hpp"
#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "core/status.hpp"
#include "messages/system_config.hpp"
#include "net/bind_address.hpp"
#include "net/bulk_channel.hpp"
#include "net/gatekeeper.hpp"
#include "net/shared_secret.hpp"

namespace po = boost::program_options;

namespace troupe::cli {
namespace {

int g_stop_pipe_write = -1;  // the handler's end of StopSignalPipe

extern "C" void write_stop_signal(int sig) {
  const unsigned char byte = static_cast<unsigned char>(sig);
  const int saved = errno;
  [[maybe_unused]] auto written = ::write(g_stop_pipe_write, &byte, 1);
  errno = saved;
}

// SIGINT / SIGTERM, whichever thread receives them, become one byte in a pipe.
class StopSignalPipe {
 public:
  StopSignalPipe() {
    if (::pipe(fds_) != 0) throw unavailable("cannot create the stop-signal pipe");
    g_stop_pipe_write = fds_[1];
    struct sigaction action {};
    action.sa_handler = write_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    ::sigaction(SIGINT, &action, nullptr);
    ::sigaction(SIGTERM, &action, nullptr);
  }
  ~StopSignalPipe() {
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  StopSignalPipe(const StopSignalPipe&) = delete;
  StopSignalPipe& operator=(const StopSignalPipe&) = delete;

  /// Blocks until a stop signal arrives; returns its number.
  int wait() {
    unsigned char byte = 0;
    while (::read(fds_[0], &byte, 1) != 1) {
      if (errno != EINTR) throw unavailable("reading the stop-signal pipe failed");
    }
    return byte;
  }

 private:
  int fds_[2] = {-1, -1};
};

}  // namespace

int run_serve_command(const std::vector<std::string>& args) {
  po::options_description options("troupe serve options");
  std::string secret_file, bind;
  int64_t port = 0;  // read signed: program_options wraps "-1" into an unsigned option
  options.add_options()("secret-file", po::value(&secret_file),
                        "file holding the cluster's shared secret "
                        "(default: $TROUPE_SECRET)")("port", po::value(&port)->default_value(0),
                                                     "TCP port; 0 picks a free one")(
      "bind", po::value(&bind)->default_value("127.0.0.1"), "address to listen on");
  po::variables_map vm;
  if (!parse_command_line("troupe serve [options]", args, options, vm)) return 0;
  if (port < 0 || port > 65535)
    throw po::error("--port must be in 0..65535 (0 picks a free one), got " + std::to_string(port));
  std::string secret = load_shared_secret(secret_file);
  const std::string exposed = exposed_bind_warning(bind);
  if (!exposed.empty()) std::cerr << "troupe serve: " << exposed << std::endl;

  // A handler, not a blocked mask + sigwait: threads that start before main (the math library's
  // pool) do not block the signals, and one that took SIGTERM with its default action killed the
  // process (exit 143 instead of a clean stop). The handler may run on any thread; it only writes
  // the signal number into a pipe that the main thread waits on.
  StopSignalPipe stop;
  caf::actor_system_config cfg;
  configure_actor_system(cfg);
  caf::actor_system sys{cfg};
  BulkListener bulk(secret);  // tensor bytes beside CAF; same secret, loopback, port 0
  auto service = spawn_tensor_service(sys, bulk.port());
  auto gate = spawn_gatekeeper(sys, secret, service);
  auto published = sys.middleman().publish(gate, uint16_t(port), bind.c_str());
  if (!published) {
    std::cerr << "troupe serve: cannot listen on " << bind << ":" << port << ": "
              << sys.render(published.error()) << "\n";
    caf::anon_send_exit(gate, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(service, caf::exit_reason::user_shutdown);
    return 1;
  }
  std::printf("PORT %u\n", unsigned(*published));
  std::fflush(stdout);

  const int received = stop.wait();
  std::cerr << "troupe serve: stopping on signal " << received << "\n";
  // No unpublish: in CAF 0.17.6 it closes the doorman asynchronously, and a system shut down right
  // after it can leak the doorman (LeakSanitizer: default_multiplexer::new_doorman, about 1 stop
  // in 200); the middleman's own shutdown closes the listening socket.
  // A published actor keeps the system alive until it is told to exit (CAF-NOTES pitfall 3).
  caf::anon_send_exit(gate, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(service, caf::exit_reason::user_shutdown);
  return 0;
}

}  // namespace troupe::cli
