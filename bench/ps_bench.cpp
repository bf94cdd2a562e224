// `troupe bench ps`: parameter-server throughput against real `troupe server --job ps` child
// processes, next to raw TCP loopback measured in the same run. Dense: pull (read) and push
// (assign) of one 16 MiB float32 variable on ps 0. Sparse: a 1,000,000 x 64 float32 embedding
// split over 2 ps processes, and 2 worker clients (threads of this process sharing its actor
// system and middleman connections) each doing steps of 1024 random ids: embedding_lookup, loss
// 0.5 * sum(row^2) / 1024, and an SGD step on the looked-up rows only (apply_gradients).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <thread>

#include <caf/all.hpp>

#include "bench/bench_table.hpp"
#include "bench/tcp_loopback.hpp"
#include "cli/command_line.hpp"
#include "coordinator/ps/connect_ps_shards.hpp"
#include "coordinator/ps/ps_bulk_client.hpp"
#include "coordinator/ps/ps_client.hpp"
#include "coordinator/ps/sharded_variable.hpp"
#include "core/ps/shard_write.hpp"
#include "core/status.hpp"
#include "kernels/ops.hpp"
#include "kernels/registry.hpp"
#include "messages/system_config.hpp"
#include "net/child_process.hpp"
#include "net/cluster_credentials.hpp"
#include "net/loopback_port_reservation.hpp"
#include "net/shared_secret.hpp"

namespace po = boost::program_options;

namespace troupe {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The ps tasks of the run: `troupe server --cluster FILE --job ps --task k` children, each
// listening once it has printed its first line.
struct PsProcesses {
  // The tasks' ports, held as `troupe launch` holds them: nothing else takes one before its task
  // listens (net/loopback_port_reservation.hpp).
  net::LoopbackPortReservation reserved;
  ClusterCredentials credentials;
  ClusterSpec cluster;
  std::vector<std::unique_ptr<ChildProcess>> children;

  PsProcesses(int count, bool tls) : reserved(count) {
    std::vector<std::string> nodes{"bench"}, addresses;
    const std::vector<int>& ports = reserved.ports();
    for (int k = 0; k < count; ++k) {
      nodes.push_back("ps" + std::to_string(k));
      addresses.push_back("127.0.0.1:" + std::to_string(ports[size_t(k)]));
    }
    credentials = make_cluster_credentials(nodes, tls);
    cluster = ClusterSpec::from_lists({{"ps", addresses}});
    const std::string file = credentials.dir + "/cluster.json";
    std::ofstream(file) << cluster.to_json();
    for (int k = 0; k < count; ++k) {
      std::vector<std::string> args{"server",
                                    "--cluster",
                                    file,
                                    "--job",
                                    "ps",
                                    "--task",
                                    std::to_string(k),
                                    "--secret-file",
                                    credentials.secret_file};
      if (tls)
        args.insert(args.end(), {"--tls-dir", credentials.dir, "--node", "ps" + std::to_string(k)});
      else
        args.push_back("--no-tls");
      children.push_back(std::make_unique<ChildProcess>(current_executable(), args));
      if (!children.back()->read_line(std::chrono::seconds(60)))
        throw unavailable("bench ps: /job:ps/task:" + std::to_string(k) +
                          " did not start: " + children.back()->err());
    }
  }
  ~PsProcesses() { remove_cluster_credentials(credentials); }

  // Waits for every ps task to exit after the job-over message; a non-zero exit is an error.
  void wait_stopped() {
    for (size_t k = 0; k < children.size(); ++k) {
      auto code = children[k]->wait(std::chrono::seconds(30));
      if (code != 0)
        throw internal_error("bench ps: /job:ps/task:" + std::to_string(k) + " exited with " +
                             (code ? std::to_string(*code) : "a timeout") + ": " +
                             children[k]->err());
    }
  }
};

struct DenseResult {
  double pull_gbps = 0, push_gbps = 0;
};

DenseResult measure_dense(const PsClient& client, const caf::actor& shard, size_t bytes, int reps,
                          const std::string& name = "dense") {
  Tensor value = Tensor::zeros(DType::float32, Shape{int64_t(bytes / 4)});
  client.create(shard, ps_create_msg{{name, "", {}, {}}, value});
  ps_write_msg push{name, uint8_t(ShardWrite::assign), 0, Tensor(), value};
  client.read(shard, name);  // warm-up: connections and buffers
  client.write(shard, push);
  DenseResult r;
  auto start = Clock::now();
  for (int i = 0; i < reps; ++i)
    if (client.read(shard, name).byte_size() != bytes)
      throw data_loss("bench ps: a pull returned the wrong size");
  r.pull_gbps = double(bytes) * reps / seconds_since(start) / 1e9;
  start = Clock::now();
  for (int i = 0; i < reps; ++i) client.write(shard, push);
  r.push_gbps = double(bytes) * reps / seconds_since(start) / 1e9;
  return r;
}

// Pushes (assign) of `bytes` per message, timed over about 64 MiB in all (at most 2048 pushes):
// where a value starts to be worth the bulk connection.
double measure_push_gbps(const PsClient& client, const caf::actor& shard, size_t bytes,
                         const std::string& path) {
  const std::string name = "push_" + path + "_" + std::to_string(bytes);
  Tensor value = Tensor::zeros(DType::float32, Shape{int64_t(bytes / 4)});
  client.create(shard, ps_create_msg{{name, "", {}, {}}, value});
  ps_write_msg push{name, uint8_t(ShardWrite::assign), 0, Tensor(), value};
  client.write(shard, push);
  const int reps = int(std::clamp<size_t>((size_t(64) << 20) / bytes, 4, 2048));
  auto start = Clock::now();
  for (int i = 0; i < reps; ++i) client.write(shard, push);
  return double(bytes) * reps / seconds_since(start) / 1e9;
}

struct SparseResult {
  double rows_per_s = 0, ms_per_step = 0;
  double loss_mean = 0;  ///< over every worker step: finite when the lookups return real rows
};

// One worker's steps (on its own copy of the handle); returns the sum of its steps' losses.
double worker_steps(ShardedVariable embedding, int steps, int batch, uint32_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<int64_t> pick(0, embedding.shape().dim(0) - 1);
  UpdateRule sgd;
  sgd.learning_rate = 0.5f;
  double total = 0;
  std::vector<int64_t> ids(static_cast<size_t>(batch));
  for (int s = 0; s < steps; ++s) {
    for (auto& id : ids) id = pick(random);
    Tensor id_tensor = Tensor::from_vector<int64_t>(Shape{int64_t(batch)}, ids);
    Tensor rows = embedding.embedding_lookup(id_tensor);
    // loss = 0.5 * sum(row^2) / batch, so d loss / d row = row / batch. One pass, per row a
    // float sum (vectorised) added to a double total, as a framework's reduce_sum would.
    const float* r = rows.data<float>();
    Tensor grad(DType::float32, rows.shape());
    float* g = grad.data<float>();
    const int64_t width = rows.shape().row_elements(), count = rows.num_elements();
    const float scale = 1.0f / float(batch);
    double loss = 0;
    for (int64_t begin = 0; begin < count; begin += width) {
      float row_sum = 0;
      for (int64_t i = begin; i < begin + width; ++i) {
        row_sum += r[i] * r[i];
        g[i] = r[i] * scale;
      }
      loss += 0.5 * double(row_sum);
    }
    loss /= batch;
    total += loss;
    embedding.apply_gradients(sgd, id_tensor, grad);
  }
  return total;
}

SparseResult measure_sparse(std::shared_ptr<const PsClient> client,
                            const std::vector<caf::actor>& shards, int64_t rows, int64_t dim,
                            int workers, int steps, int batch) {
  Tensor initial = Tensor::zeros(DType::float32, Shape{rows, dim});
  float* v = initial.data<float>();
  for (int64_t i = 0; i < initial.num_elements(); ++i) v[i] = float((i * 7919) % 1000) / 1000.f;
  RoundRobinPlacement placement(int64_t(shards.size()));
  ShardedVariable embedding = ShardedVariable::create(client, shards, placement, "embedding",
                                                      initial, int64_t(shards.size()));
  initial = Tensor();
  worker_steps(embedding, 2, batch, 99);  // warm-up
  std::vector<double> losses(static_cast<size_t>(workers));
  std::vector<std::string> errors(static_cast<size_t>(workers));
  auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w)
    threads.emplace_back([&, w] {
      try {
        losses[size_t(w)] = worker_steps(embedding, steps, batch, uint32_t(w + 1));
      } catch (const std::exception& e) {
        errors[size_t(w)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  const double seconds = seconds_since(start);
  for (int w = 0; w < workers; ++w)
    if (!errors[size_t(w)].empty())
      throw internal_error("bench ps: worker " + std::to_string(w) + ": " + errors[size_t(w)]);
  SparseResult r;
  r.rows_per_s = double(workers) * steps * batch / seconds;
  r.ms_per_step = seconds * 1e3 / steps;
  for (double l : losses) r.loss_mean += l / (double(workers) * steps);
  return r;
}

// What one ps shard's kernels cost per request of a sparse step: a gather of `ids` random rows of
// a rows x dim float32 table (one shard of the embedding) and the SGD apply to them, in this
// process, best of `reps` (each with fresh ids): the part of a step that is not transport.
struct ShardKernelResult {
  double gather_us = 0, apply_us = 0;
};

ShardKernelResult measure_shard_kernels(int64_t rows, int64_t dim, int64_t ids, int reps) {
  const KernelRegistry registry = make_cpu_registry();
  Ops ops(registry);
  Tensor table = Tensor::zeros(DType::float32, Shape{rows, dim});
  Tensor out(DType::float32, Shape{ids, dim});
  Tensor grad = Tensor::zeros(DType::float32, Shape{ids, dim});
  std::mt19937_64 random(7);
  std::uniform_int_distribution<int64_t> pick(0, rows - 1);
  std::vector<int64_t> picked(static_cast<size_t>(ids));
  ShardKernelResult r{1e30, 1e30};
  for (int k = 0; k < reps; ++k) {
    for (auto& id : picked) id = pick(random);
    const Tensor indices = Tensor::from_vector<int64_t>(Shape{ids}, picked);
    auto start = Clock::now();
    ops.gather_rows(table, indices, out);
    r.gather_us = std::min(r.gather_us, seconds_since(start) * 1e6);
    for (auto& id : picked) id = pick(random);
    const Tensor other = Tensor::from_vector<int64_t>(Shape{ids}, picked);
    start = Clock::now();
    ops.sparse_apply_sgd(table, other, grad, SgdOptions{0.5});
    r.apply_us = std::min(r.apply_us, seconds_since(start) * 1e6);
  }
  return r;
}

}  // namespace

int run_ps_bench(const std::vector<std::string>& args) {
  po::options_description options("troupe bench ps options");
  bool json = false, tls = false;
  int reps = 5, steps = 200;
  options.add_options()("json", po::bool_switch(&json), "print one JSON object instead of a table")(
      "reps", po::value(&reps)->default_value(5), "timed pulls and pushes of the dense variable")(
      "steps", po::value(&steps)->default_value(200), "sparse steps per worker client")(
      "tls", po::bool_switch(&tls), "mutual TLS to the ps tasks (default: shared secret only)");
  po::variables_map vm;
  if (!parse_command_line("troupe bench ps [--json] [--reps N] [--steps N] [--tls]", args, options,
                          vm))
    return 0;
  if (reps < 1) throw po::error("--reps must be >= 1, got " + std::to_string(reps));
  if (steps < 1) throw po::error("--steps must be >= 1, got " + std::to_string(steps));
  constexpr size_t kDenseBytes = size_t(16) << 20;
  constexpr int64_t kRows = 1000000, kDim = 64;
  constexpr int kPs = 2, kWorkers = 2, kBatch = 1024;

  // The TCP ceiling first: it forks, which must happen before CAF starts threads.
  const double tcp_before = measure_tcp_loopback_gbps(kDenseBytes, reps);
  DenseResult dense, middleman;
  SparseResult sparse;
  struct SweepPoint {
    size_t bytes;
    double caf_gbps, bulk_gbps;
  };
  std::vector<SweepPoint> sweep;
  const size_t kSweepBytes[] = {size_t(1) << 10,  size_t(4) << 10,   size_t(16) << 10,
                                size_t(64) << 10, size_t(256) << 10, size_t(1) << 20,
                                size_t(4) << 20};
  {
    PsProcesses ps(kPs, tls);
    ActorSystemOptions system_options;
    if (tls) set_tls_from_dir(system_options, ps.credentials.dir, "bench");
    caf::actor_system_config cfg;
    configure_actor_system(cfg, system_options);
    caf::actor_system sys{cfg};
    PsConnectOptions connect;
    connect.secret = load_shared_secret(ps.credentials.secret_file);
    connect.tls = tls;
    PsShards shards = connect_ps_shards(sys, ps.cluster, connect);
    auto client = std::make_shared<PsClient>(sys, std::chrono::seconds(120));
    client->name_shards(shards.handles, shards.labels());
    // The same pulls and pushes as CAF messages (a client without bulk connections), then on
    // the bulk connections, then pushes of growing size on both.
    auto caf_only = std::make_shared<PsClient>(sys, std::chrono::seconds(120));
    caf_only->name_shards(shards.handles, shards.labels());
    middleman = measure_dense(*caf_only, shards.handles[0], kDenseBytes, reps, "dense_caf");
    if (use_ps_bulk(sys, shards, connect, *client) != shards.handles.size())
      throw internal_error("bench ps: a ps task offers no bulk connection");
    dense = measure_dense(*client, shards.handles[0], kDenseBytes, reps);
    auto always_bulk = std::make_shared<PsClient>(sys, std::chrono::seconds(120));
    use_ps_bulk(sys, shards, connect, *always_bulk, 0);
    for (size_t bytes : kSweepBytes)
      sweep.push_back({bytes, measure_push_gbps(*caf_only, shards.handles[1], bytes, "caf"),
                       measure_push_gbps(*always_bulk, shards.handles[1], bytes, "bulk")});
    sparse = measure_sparse(client, shards.handles, kRows, kDim, kWorkers, steps, kBatch);
    stop_ps_shards(shards);
    ps.wait_stopped();
  }
  // Measured again once CAF's threads are gone (fork is safe again); the better of the two is the
  // limit, so a noisy neighbour during one TCP run does not flatter the ratios.
  const double tcp_gbps = std::max(tcp_before, measure_tcp_loopback_gbps(kDenseBytes, reps));
  // Each ps task holds half the rows and gets about half of a step's ids.
  const ShardKernelResult kernels = measure_shard_kernels(kRows / kPs, kDim, kBatch / kPs, 200);

  std::string sweep_json;
  for (auto& p : sweep)
    sweep_json += (sweep_json.empty() ? "" : ",") + std::string("{\"bytes\":") +
                  std::to_string(p.bytes) + ",\"middleman_gbps\":" + std::to_string(p.caf_gbps) +
                  ",\"bulk_gbps\":" + std::to_string(p.bulk_gbps) + "}";
  const char* transport = tls ? "mutual TLS" : "middleman, shared secret";
  if (json) {
    std::printf(
        "{\"transport\":\"%s\",\"tcp_gbps\":%.3f,"
        "\"dense\":{\"bytes\":%zu,\"path\":\"bulk\",\"pull_gbps\":%.3f,\"push_gbps\":%.3f,"
        "\"pull_ratio_to_tcp\":%.3f,\"push_ratio_to_tcp\":%.3f},"
        "\"dense_middleman\":{\"pull_gbps\":%.3f,\"push_gbps\":%.3f,"
        "\"pull_ratio_to_tcp\":%.3f,\"push_ratio_to_tcp\":%.3f},"
        "\"push_by_size\":[%s],"
        "\"sparse\":{\"rows\":%lld,\"dim\":%lld,\"ps\":%d,\"workers\":%d,\"ids_per_step\":%d,"
        "\"steps_per_worker\":%d,\"rows_per_s\":%.0f,\"ms_per_step\":%.3f,"
        "\"loss_mean\":%.6f},"
        "\"shard_kernels\":{\"rows\":%lld,\"ids\":%d,\"gather_us\":%.2f,\"sgd_apply_us\":%.2f}}\n",
        transport, tcp_gbps, kDenseBytes, dense.pull_gbps, dense.push_gbps,
        dense.pull_gbps / tcp_gbps, dense.push_gbps / tcp_gbps, middleman.pull_gbps,
        middleman.push_gbps, middleman.pull_gbps / tcp_gbps, middleman.push_gbps / tcp_gbps,
        sweep_json.c_str(), static_cast<long long>(kRows), static_cast<long long>(kDim), kPs,
        kWorkers, kBatch, steps, sparse.rows_per_s, sparse.ms_per_step, sparse.loss_mean,
        static_cast<long long>(kRows / kPs), kBatch / kPs, kernels.gather_us, kernels.apply_us);
  } else {
    std::printf("ps tasks: %d `troupe server --job ps` processes (%s)\n", kPs, transport);
    std::printf("raw TCP loopback, 16 MiB msgs     %8.3f GB/s\n", tcp_gbps);
    std::printf("dense pull 16 MiB, bulk           %8.3f GB/s  (%.2fx TCP)\n", dense.pull_gbps,
                dense.pull_gbps / tcp_gbps);
    std::printf("dense push 16 MiB (assign), bulk  %8.3f GB/s  (%.2fx TCP)\n", dense.push_gbps,
                dense.push_gbps / tcp_gbps);
    std::printf("dense pull 16 MiB, middleman      %8.3f GB/s  (%.2fx TCP)\n", middleman.pull_gbps,
                middleman.pull_gbps / tcp_gbps);
    std::printf("dense push 16 MiB, middleman      %8.3f GB/s  (%.2fx TCP)\n", middleman.push_gbps,
                middleman.push_gbps / tcp_gbps);
    for (auto& p : sweep)
      std::printf("push %8zu B: middleman %6.3f GB/s, bulk %6.3f GB/s\n", p.bytes, p.caf_gbps,
                  p.bulk_gbps);
    std::printf("sparse 1M x 64, 2 ps, 2 workers   %8.0f rows/s (%.2f ms/step, mean loss %.4f)\n",
                sparse.rows_per_s, sparse.ms_per_step, sparse.loss_mean);
    std::printf(
        "  of which a shard's kernels, %d of %lld rows: gather %.1f us, SGD apply %.1f us"
        " (in process)\n",
        kBatch / kPs, static_cast<long long>(kRows / kPs), kernels.gather_us, kernels.apply_us);
  }
  return 0;
}

}  // namespace troupe
