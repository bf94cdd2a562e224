#pragma once
// Builds a troupe node's CAF configuration in code. cfg.parse() is never called: it would read
// caf-application.ini from the working directory behind the user's back.

#include <chrono>
#include <cstddef>
#include <string>

#include <caf/actor_system_config.hpp>

namespace troupe {

/// Options for configure_actor_system.
struct ActorSystemOptions {
  size_t scheduler_threads = 0;  ///< 0 = std::thread::hardware_concurrency()
  bool load_middleman = true;    ///< needed for publish / remote_actor
  size_t aggressive_poll_attempts =
      1000;  ///< busy polls of an idle scheduler worker before it sleeps
  /// How often a sleeping scheduler worker wakes to steal a job queued behind a busy one.
  std::chrono::milliseconds idle_steal_period{1};
  /// Mutual TLS (CAF's openssl module): this node's certificate, its private key and the
  /// cluster CA that peers' certificates must chain to. All three or none; with them the
  /// openssl manager is loaded and every TLS connection verifies its peer.
  std::string tls_certificate;
  std::string tls_key;
  std::string tls_cafile;

  /// For a process that trains on replica threads (troupe run, compare, bench train): there
  /// CAF's workers carry a few control messages per strategy.run and the replica threads keep
  /// every core busy, so each timed wake of an idle worker preempts a replica (measured on 2
  /// cores: ~1,000 preemptions per replica thread per second with the 1 ms period, ~100 with
  /// this one) and its partner waits for it at the next all-reduce.
  static ActorSystemOptions for_replica_training() {
    ActorSystemOptions o;
    o.idle_steal_period = std::chrono::milliseconds(100);
    return o;
  }

  /// `threads` scheduler threads and no middleman: an actor system for one process.
  static ActorSystemOptions in_process(size_t threads) {
    ActorSystemOptions o;
    o.scheduler_threads = threads;
    o.load_middleman = false;
    return o;
  }
};

/// The TLS options for node `node` of a `troupe cluster-certs` directory:
/// <dir>/<node>.pem, <dir>/<node>.key, <dir>/ca.pem.
void set_tls_from_dir(ActorSystemOptions& options, const std::string& dir, const std::string& node);

/// True when `options` asks for TLS (any of the three files set).
bool wants_tls(const ActorSystemOptions& options);

/// Registers all message types, sets scheduler.max-threads and loads the middleman (and, with
/// TLS options, the openssl manager). Throws invalid_argument naming what is missing for a
/// partial TLS set and not_found naming a TLS file that cannot be read.
void configure_actor_system(caf::actor_system_config& cfg, const ActorSystemOptions& options = {});

}  // namespace troupe
