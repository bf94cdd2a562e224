#include "cli/serve_ps_task.hpp"

#include <atomic>
#include <csignal>
#include <cstdio>

#include <caf/all.hpp>

#include "actors/ps_bulk_server.hpp"
#include "actors/ps_shard.hpp"
#include "cli/commands.hpp"
#include "core/host_port.hpp"
#include "core/status.hpp"
#include "kernels/registry.hpp"
#include "messages/system_config.hpp"
#include "net/bind_address.hpp"
#include "net/gatekeeper.hpp"
#include "net/tls_transport.hpp"

namespace troupe::cli {
namespace {

std::atomic<int> g_stop_signal{0};

extern "C" void on_ps_stop_signal(int sig) { g_stop_signal.store(sig); }

// Waits for the shard to stop (the job is over) or a signal; returns what ended the wait.
std::string wait_until_stopped(caf::actor_system& sys, const caf::actor& shard) {
  caf::scoped_actor self{sys};
  self->monitor(shard);
  bool down = false;
  // A signal handler cannot message an actor, so the wait wakes up to look at the flag.
  while (!down && g_stop_signal.load() == 0)
    self->receive([&](caf::down_msg&) { down = true; },
                  caf::after(std::chrono::milliseconds(100)) >> [] {});
  if (down) return "the job is over (a client stopped the shard)";
  return std::string("stopped by ") + ::strsignal(g_stop_signal.load());
}

}  // namespace

int serve_ps_task(const TfConfig& config, const PsTaskOptions& options) {
  const std::string me = config.task.name();
  const std::string shard_name = "ps:" + std::to_string(config.task.index);
  const HostPort address =
      HostPort::parse(config.cluster.task_address("ps", config.task.index), "cluster.ps");
  // Before anything slow (the actor system, TLS): a launcher that stops its ps tasks as soon as
  // a short job ends may signal one that is still starting, and it should stop, not die.
  g_stop_signal.store(0);
  std::signal(SIGINT, on_ps_stop_signal);
  std::signal(SIGTERM, on_ps_stop_signal);
  const bool tls = !options.tls_dir.empty();
  ActorSystemOptions system_options;
  if (tls) set_tls_from_dir(system_options, options.tls_dir, options.tls_node);
  caf::actor_system_config cfg;
  configure_actor_system(cfg, system_options);
  caf::actor_system sys{cfg};
  // Large dense values travel on the bulk connection. Its bytes are not encrypted, so with TLS
  // it is offered only on a loopback address (they never leave this host); a TLS task on another
  // address keeps every value inside the encrypted middleman.
  std::unique_ptr<PsBulkServer> bulk;
  if (!tls || is_loopback_address(address.host)) {
    PsBulkServerOptions bulk_options;
    bulk_options.secret = options.secret;
    bulk_options.host = address.socket_host();
    bulk_options.name = shard_name;
    try {
      bulk = std::make_unique<PsBulkServer>(sys, bulk_options);
    } catch (const Error& e) {
      // A host name or an IPv6 address: the shard still serves everything through CAF.
      std::fprintf(stderr, "troupe server %s: no bulk connection for large values: %s\n",
                   me.c_str(), e.what());
    }
  }
  PsShardOptions shard_options{shard_name,
                               std::make_shared<const KernelRegistry>(make_cpu_registry())};
  shard_options.bulk_port = bulk ? bulk->port() : 0;
  caf::actor shard = spawn_ps_shard(sys, std::move(shard_options));
  if (bulk) bulk->serve(shard);
  caf::actor gate = spawn_gatekeeper(sys, options.secret, shard);
  auto stop_actors = [&] {
    caf::anon_send_exit(gate, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(shard, caf::exit_reason::user_shutdown);
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
  };
  auto port = publish_actor(sys, gate, uint16_t(address.port), address.socket_host(), tls);
  if (!port) {
    stop_actors();
    throw unavailable("troupe server " + me + ": cannot listen on " + address.host + ":" +
                      std::to_string(address.port) + ": " + sys.render(port.error()));
  }
  std::printf("troupe server %s%s%s' on %s:%d%s%s\n", me.c_str(), kPsServingLine,
              shard_name.c_str(), address.host.c_str(), int(*port),
              tls ? " with mutual TLS" : " (shared secret, no TLS)",
              bulk ? (", bulk values on port " + std::to_string(bulk->port())).c_str() : "");
  std::fflush(stdout);
  const std::string why = wait_until_stopped(sys, shard);
  stop_actors();
  std::printf("troupe server %s: %s\n", me.c_str(), why.c_str());
  std::fflush(stdout);
  return 0;
}

}  // namespace troupe::cli
