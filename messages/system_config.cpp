#include "messages/system_config.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>

#include "core/status.hpp"

#include "messages/type_ids.hpp"

namespace troupe {
namespace {

// Without all three files CAF's openssl module silently falls back to anonymous TLS (no peer
// verification, CAF-NOTES §9): a partial set is refused, naming what is missing.
void configure_tls(caf::actor_system_config& cfg, const ActorSystemOptions& o) {
  std::string missing;
  for (auto [value, name] :
       {std::pair{&o.tls_certificate, "certificate"}, std::pair{&o.tls_key, "private key"},
        std::pair{&o.tls_cafile, "CA file"}})
    if (value->empty()) missing += (missing.empty() ? "" : ", ") + std::string(name);
  if (!missing.empty())
    throw invalid_argument("TLS needs a certificate, a private key and a CA file; missing: " +
                           missing);
  // CAF reads the files only when the first connection opens, and then fails it without a word:
  // check them here, where the error can name the file.
  for (const auto* path : {&o.tls_certificate, &o.tls_key, &o.tls_cafile})
    if (::access(path->c_str(), R_OK) != 0)
      throw not_found("cannot read TLS file " + *path + ": " + std::strerror(errno));
  cfg.openssl_certificate = o.tls_certificate;
  cfg.openssl_key = o.tls_key;
  cfg.openssl_cafile = o.tls_cafile;
  cfg.load<caf::openssl::manager>();
}

}  // namespace

bool wants_tls(const ActorSystemOptions& o) {
  return !o.tls_certificate.empty() || !o.tls_key.empty() || !o.tls_cafile.empty();
}

void set_tls_from_dir(ActorSystemOptions& o, const std::string& dir, const std::string& node) {
  o.tls_certificate = dir + "/" + node + ".pem";
  o.tls_key = dir + "/" + node + ".key";
  o.tls_cafile = dir + "/ca.pem";
}

void configure_actor_system(caf::actor_system_config& cfg, const ActorSystemOptions& options) {
  register_message_types(cfg);
  size_t threads = options.scheduler_threads;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  // CAF's default is max(cores, 4): 4 workers on a 2-core box were measurably slower.
  cfg.set("scheduler.max-threads", threads);
  // CAF 0.17's idle workers poll 100 times, then sleep 50 us between 500 more polls (a message
  // arriving then waits up to ~100 us: merge_call rounds measured 70-100 us), then sleep on a
  // condition variable and steal only every 10 ms (jobs queued behind a busy worker waited that
  // long: a 2-replica ring ran on one worker). Poll longer, skip the 50 us naps, and steal at
  // least every millisecond, unless the caller knows its work runs elsewhere (idle_steal_period).
  cfg.set("work-stealing.aggressive-poll-attempts", options.aggressive_poll_attempts);
  cfg.set("work-stealing.moderate-poll-attempts", 0);
  cfg.set("work-stealing.relaxed-sleep-duration", caf::timespan{options.idle_steal_period});
  if (options.load_middleman || wants_tls(options)) cfg.load<caf::io::middleman>();
  if (wants_tls(options)) configure_tls(cfg, options);
}

}  // namespace troupe
