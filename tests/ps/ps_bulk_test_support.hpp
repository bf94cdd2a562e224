#pragma once
// The ps processes of the bulk-connection tests: each is the test binary started again, serving
// one shard ("ps:0") with a bulk port until its stdin closes (PsBulkProcess.
// ChildServesAShardWithABulkPort), and a client process's view of one or several of them.

#include <gtest/gtest.h>

#include <sys/types.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <caf/all.hpp>

#include "coordinator/ps/connect_ps_shards.hpp"
#include "coordinator/ps/ps_bulk_client.hpp"
#include "coordinator/ps/ps_client.hpp"
#include "kernels/update_rule.hpp"
#include "messages/system_config.hpp"
#include "net/child_process.hpp"
#include "net/wire_client.hpp"

namespace troupe::testing {

inline constexpr const char* kServeVariable = "TROUPE_TEST_PS_BULK_SERVE";
inline constexpr const char* kSecret = "ps-bulk-secret";

inline ActorSystemOptions networked() {
  ActorSystemOptions o;
  o.scheduler_threads = 2;
  return o;
}

// The parent's side of one ps process: its gatekeeper port from its first line.
struct PsProcess {
  ChildProcess child{current_executable(),
                     {"--gtest_filter=PsBulkProcess.ChildServesAShardWithABulkPort"},
                     {std::string(kServeVariable) + "=1"}};
  uint16_t port = 0, bulk_port = 0;

  PsProcess() {
    for (int i = 0; i < 50 && bulk_port == 0; ++i) {
      auto line = child.read_line(std::chrono::seconds(60));
      if (!line) break;
      if (line->rfind("PS_SHARD_PORT ", 0) == 0) port = uint16_t(std::stoi(line->substr(14)));
      if (line->rfind("PS_BULK_PORT ", 0) == 0) bulk_port = uint16_t(std::stoi(line->substr(13)));
    }
  }

  // Ends the job (closes the child's stdin) and expects the child to exit cleanly.
  void stop() {
    child.close_stdin();
    EXPECT_EQ(child.wait(std::chrono::seconds(60)), 0) << child.err();
  }

  // Waits (bounded) until the child's stderr holds `text`.
  bool logged(const std::string& text) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (child.err().find(text) == std::string::npos &&
           std::chrono::steady_clock::now() < deadline)
      child.pump_for(std::chrono::milliseconds(200));
    return child.err().find(text) != std::string::npos;
  }
};

// A client process's view: its actor system, the shards of `ps` (task k is "/job:ps/task:k"),
// and a PsClient whose bulk client for shard k is bulks[k] (so that a test can read its byte
// counters); `bulk` is the first one's.
struct Client {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  PsShards shards;
  std::unique_ptr<PsClient> client;
  std::vector<std::shared_ptr<PsBulkClient>> bulks;
  std::shared_ptr<PsBulkClient> bulk;

  // `min_bytes`: smaller gathers, pushes and applies stay CAF messages (PsBulkClientOptions).
  explicit Client(const PsProcess& ps, uint64_t min_bytes = kPsBulkMinBytes)
      : Client(std::vector<const PsProcess*>{&ps}, min_bytes) {}
  explicit Client(const std::vector<const PsProcess*>& ps, uint64_t min_bytes = kPsBulkMinBytes) {
    configure_actor_system(cfg, networked());
    sys = std::make_unique<caf::actor_system>(cfg);
    for (size_t k = 0; k < ps.size(); ++k) {
      WireClientOptions o;
      o.port = ps[k]->port;
      o.secret = kSecret;
      shards.handles.push_back(connect_to_service(*sys, o));
      shards.tasks.push_back("/job:ps/task:" + std::to_string(k));
      shards.addresses.push_back("127.0.0.1:" + std::to_string(ps[k]->port));
    }
    client = std::make_unique<PsClient>(*sys, std::chrono::seconds(120));
    client->name_shards(shards.handles, shards.labels());
    for (size_t k = 0; k < ps.size(); ++k) {
      PsBulkClientOptions options;
      options.host = "127.0.0.1";
      options.port = ps[k]->bulk_port;
      options.secret = kSecret;
      options.label = "ps shard " + shards.labels()[k];
      options.timeout = std::chrono::seconds(120);
      options.min_bytes = min_bytes;
      bulks.push_back(std::make_shared<PsBulkClient>(options));
      client->use_bulk(shards.handles[k], bulks.back());
    }
    bulk = bulks.at(0);
  }
  const caf::actor& shard(size_t k = 0) const { return shards.handles.at(k); }
};

// n floats whose values depend on `seed` and the index, all exactly representable.
inline Tensor pattern(int64_t n, int seed) {
  Tensor t(DType::float32, Shape{n});
  float* p = t.data<float>();
  for (int64_t i = 0; i < n; ++i) p[i] = float((i * 7 + seed) % 1021);
  return t;
}

inline bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.byte_size()) == 0;
}

// True once /proc shows every thread of `pid` stopped (state T); a group stop reaches each
// thread on its own, after kill() has returned. False after a minute.
inline bool all_threads_stopped(pid_t pid) {
  namespace fs = std::filesystem;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (std::chrono::steady_clock::now() < deadline) {
    bool all = true;
    std::error_code error;
    for (auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", error)) {
      std::ifstream stat(task.path() / "stat");
      std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
      const auto end_of_name = text.rfind(')');
      all = all && end_of_name != std::string::npos && end_of_name + 2 < text.size() &&
            text[end_of_name + 2] == 'T';
    }
    if (all && !error) return true;
    std::this_thread::yield();
  }
  return false;
}

inline UpdateRule sgd_lr1() {
  UpdateRule r;
  r.learning_rate = 1;
  return r;
}

}  // namespace troupe::testing
