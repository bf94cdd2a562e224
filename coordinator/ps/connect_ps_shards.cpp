#include "coordinator/ps/connect_ps_shards.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <thread>

#include <caf/all.hpp>

#include "coordinator/ps/ps_bulk_client.hpp"
#include "coordinator/ps/ps_client.hpp"
#include "core/host_port.hpp"
#include "core/status.hpp"
#include "messages/atoms.hpp"
#include "messages/timed_request.hpp"
#include "net/bind_address.hpp"
#include "net/wire_client.hpp"

namespace troupe {
namespace {

using Clock = std::chrono::steady_clock;

// Dials one ps task until it answers or the deadline passes: it may not be listening yet.
caf::actor dial(caf::actor_system& system, const std::string& job, const std::string& task,
                const std::string& address, const PsConnectOptions& options,
                Clock::time_point deadline) {
  const HostPort where = HostPort::parse(address, "cluster." + job);
  WireClientOptions connect;
  connect.host = where.socket_host();
  connect.port = uint16_t(where.port);
  connect.secret = options.secret;
  connect.tls = options.tls;
  std::string last;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    connect.timeout =
        std::clamp(left, std::chrono::milliseconds(1), std::chrono::milliseconds(5000));
    try {
      return connect_to_service(system, connect);
    } catch (const Error& e) {
      // A refused secret or certificate does not get better by retrying.
      if (e.code() != Code::unavailable)
        throw Error(e.code(), job + " task " + task + " at " + address + ": " + e.what());
      last = e.what();
    }
    if (Clock::now() >= deadline)
      throw unavailable(job + " task " + task + " at " + address + " did not answer within " +
                        std::to_string(options.timeout.count()) + " ms: " + last);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

PsShards connect_ps_shards(caf::actor_system& system, const ClusterSpec& cluster,
                           const PsConnectOptions& options) {
  if (!cluster.has_job("ps"))
    throw invalid_argument("connect to ps shards: the cluster has no \"ps\" job (jobs: " + [&] {
      std::string all;
      for (auto& j : cluster.jobs()) all += (all.empty() ? "" : ", ") + j;
      return all;
    }() + ")");
  if (options.timeout.count() < 1)
    throw invalid_argument("connect to ps shards: timeout must be >= 1 ms, got " +
                           std::to_string(options.timeout.count()));
  const auto deadline = Clock::now() + options.timeout;
  PsShards out;
  for (int index : cluster.task_indices("ps")) {
    const std::string task = task_name("ps", index);
    const std::string& address = cluster.task_address("ps", index);
    out.handles.push_back(dial(system, "ps", task, address, options, deadline));
    out.tasks.push_back(task);
    out.addresses.push_back(address);
  }
  return out;
}

std::vector<caf::actor> connect_cluster_tasks(caf::actor_system& system, const ClusterSpec& cluster,
                                              const std::string& job,
                                              const std::vector<int>& indices,
                                              const PsConnectOptions& options) {
  if (!cluster.has_job(job))
    throw invalid_argument("connect to the " + job + " tasks: the cluster has no \"" + job +
                           "\" job");
  if (options.timeout.count() < 1)
    throw invalid_argument("connect to the " + job + " tasks: timeout must be >= 1 ms, got " +
                           std::to_string(options.timeout.count()));
  const auto deadline = Clock::now() + options.timeout;
  std::vector<caf::actor> out;
  for (int index : indices)
    out.push_back(dial(system, job, task_name(job, index), cluster.task_address(job, index),
                       options, deadline));
  return out;
}

std::vector<std::string> PsShards::labels() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < tasks.size(); ++i) {
    // "/job:ps/task:1" -> "ps:1", the name `troupe server` gives the shard it hosts.
    const std::string index = tasks[i].substr(tasks[i].rfind(':') + 1);
    out.push_back("'ps:" + index + "' (" + tasks[i] + " at " + addresses[i] + ")");
  }
  return out;
}

size_t use_ps_bulk(caf::actor_system& system, const PsShards& shards,
                   const PsConnectOptions& options, PsClient& client, uint64_t min_bytes) {
  const std::vector<std::string> labels = shards.labels();
  size_t used = 0;
  caf::scoped_actor self{system};
  for (size_t k = 0; k < shards.handles.size(); ++k) {
    const HostPort where = HostPort::parse(shards.addresses[k], "cluster.ps");
    uint16_t port = 0;
    std::string failure;
    timed_request(self, shards.handles[k], options.timeout, bulk_atom::value)
        .receive([&](uint16_t p) { port = p; }, [&](caf::error& e) { failure = system.render(e); });
    if (!failure.empty())
      throw unavailable("ps task " + shards.tasks[k] + " at " + shards.addresses[k] +
                        " did not name its bulk port: " + failure);
    // Bulk bytes are not encrypted: with TLS only a loopback task's values may take them.
    if (port == 0 || (options.tls && !is_loopback_address(where.host))) continue;
    in_addr numeric{};
    if (::inet_pton(AF_INET, where.socket_host().c_str(), &numeric) != 1) continue;  // IPv4 only
    PsBulkClientOptions bulk;
    bulk.host = where.socket_host();
    bulk.port = port;
    bulk.secret = options.secret;
    bulk.label = "ps shard " + labels[k];
    bulk.timeout = client.timeout();
    bulk.min_bytes = min_bytes;
    client.use_bulk(shards.handles[k], std::make_shared<PsBulkClient>(bulk));
    ++used;
  }
  return used;
}

void stop_ps_shards(const PsShards& shards) {
  for (auto& shard : shards.handles)
    if (shard) caf::anon_send(shard, stop_atom::value);
}

}  // namespace troupe
