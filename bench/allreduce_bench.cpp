// `troupe bench allreduce`: all-reduce time, algbw and busbw (nccl-tests accounting:
// busbw = algbw x 2(n-1)/n) for the CPU collective algorithms, through the real path — replica
// actors of a MirroredStrategy calling ReplicaContext::all_reduce — or, with --processes N,
// between N `troupe collective-peer` processes: their chunks over the collective data plane
// (direct authenticated TCP, the default) or in CAF messages through the middleman
// (--transport middleman). memcpy bandwidth (and raw TCP loopback for --processes) are measured
// in the same run as the limits.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>
#include <sstream>
#include <vector>

#include "bench/bench_table.hpp"
#include "bench/memcpy_bandwidth.hpp"
#include "bench/process_group.hpp"
#include "bench/serve_process.hpp"
#include "bench/tcp_loopback.hpp"
#include "cli/command_line.hpp"
#include "coordinator/cluster/cross_memory_policy.hpp"
#include "coordinator/mirrored_strategy.hpp"
#include "coordinator/runtime.hpp"

namespace po = boost::program_options;

namespace troupe {
namespace {

struct Row {
  std::string algo;
  int replicas;
  size_t bytes;
  double time_us;
  std::string transport;  ///< what carried it (choose_transport's name)
};

/// Microseconds per all-reduce of `bytes` over the replicas of `strategy`.
double time_in_process(Strategy& strategy, size_t bytes) {
  const int64_t count = int64_t(bytes / 4);
  // Enough iterations for ~0.3 s, at least 8 (a handful of 64 MiB rounds swung 3x run to run).
  int iterations = int(std::max<size_t>(
      8, std::min<size_t>(20000, (size_t(300) << 20) / std::max<size_t>(bytes, 1) / 4)));
  // Each replica's input is made once, outside every timed run: a fill inside them cost a 64 MiB
  // round ~10 ms. (Cancelling it by subtracting a 1-iteration run from a long one gave 0 us for
  // 1 MiB when the short run happened to be the slower one on this shared machine.)
  const int n = strategy.num_replicas_in_sync();
  std::vector<Tensor> inputs;
  for (int r = 0; r < n; ++r) inputs.push_back(Tensor::filled<float>({count}, float(r + 1)));
  auto step = [&](int iters) {
    return [&inputs, iters](ReplicaContext& c, const std::vector<Tensor>&) {
      const Tensor& t = inputs.at(size_t(c.replica_id_in_sync_group()));
      Tensor out;
      for (int i = 0; i < iters; ++i) out = c.all_reduce(ReduceOp::sum, t);
      return std::vector<Tensor>{out};
    };
  };
  // Warm-up: threads, and as many pooled buffers as a loop keeps alive at once (the previous
  // result and the new one); a buffer faulted in inside the timed run costs ~16k page faults
  // per 64 MiB and made single runs of this benchmark bimodal.
  strategy.run(step(3));
  auto start = std::chrono::steady_clock::now();
  auto out = strategy.run(step(iterations));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  float expected = float(n * (n + 1) / 2);
  if (count > 0 && out[0].at(0).data<float>()[count - 1] != expected)
    throw internal_error("all-reduce result is wrong: the benchmark measured a broken path");
  return seconds / iterations * 1e6;
}

std::string random_secret() {
  std::random_device entropy;
  std::ostringstream s;
  for (int i = 0; i < 4; ++i) s << std::hex << entropy();
  return s.str();
}

}  // namespace

int run_allreduce_bench(const std::vector<std::string>& args) {
  po::options_description options("troupe bench allreduce options");
  bool json = false;
  int replicas = 2, processes = 0;
  std::string algo = "ring", sizes_text = "4KiB,64KiB,1MiB,16MiB,64MiB",
              transport = "shared_memory", inline_text = "0", small_text = "64KiB",
              large_text = "64KiB", cross_memory = "auto";
  options.add_options()("json", po::bool_switch(&json), "print one JSON object instead of a table")(
      "algo", po::value(&algo)->default_value("ring"), "ring, one_device or hierarchical")(
      "replicas", po::value(&replicas)->default_value(2), "CPU replicas in this process")(
      "processes", po::value(&processes)->default_value(0),
      "run across this many processes (one replica each) over the middleman instead")(
      "sizes", po::value(&sizes_text)->default_value(sizes_text), "comma-separated byte sizes")(
      "transport", po::value(&transport)->default_value(transport),
      "ring in one process: shared_memory (replicas meet in memory) or actors (collective peer "
      "actors at every size, as between processes); with --processes: direct (chunks over the "
      "data plane, shared memory on one host; the default), tcp (data plane over TCP only) or "
      "middleman (chunks in CAF messages)")(
      "inline-below", po::value(&inline_text)->default_value("0"),
      "with --processes and --transport direct: all-reduces smaller than this stay in CAF "
      "messages")("small-bytes", po::value(&small_text)->default_value(small_text),
                  "with --processes and --transport direct: all-reduces of at most this many "
                  "bytes meet in a shared-memory rendezvous, as a multi-worker strategy's do "
                  "(0: never)")("large-bytes", po::value(&large_text)->default_value(large_text),
                                "with --processes and --transport direct: all-reduces of at least "
                                "this many bytes are summed through the shared-memory rendezvous "
                                "in 1 MiB pieces on the calling thread (0: never; the ring "
                                "over the data plane instead)")(
      "cross-memory", po::value(&cross_memory)->default_value("auto"),
      "with --processes and --transport direct: on: large all-reduces of at least 1 MiB read "
      "the other ranks' memory directly (process_vm_readv) where every rank can; auto: like on, "
      "where process_vm_readv is fast enough here for that to pay (each rank measures it once); "
      "off: always the pieces");
  po::variables_map vm;
  if (!parse_command_line(
          "troupe bench allreduce [--algo A] [--replicas N] [--processes P] [--json]", args,
          options, vm))
    return 0;
  const auto kind = parse_host_algo_option("--algo", algo);
  if (replicas < 1) throw po::error("--replicas must be >= 1");
  if (processes == 1 || processes < 0) throw po::error("--processes must be 0 or >= 2");
  if (processes) {
    if (vm["transport"].defaulted()) transport = "direct";
    if (transport != "direct" && transport != "tcp" && transport != "middleman")
      throw po::error("--transport with --processes must be direct, tcp or middleman, got '" +
                      transport + "'");
  } else if (transport != "shared_memory" && transport != "actors") {
    throw po::error("--transport must be shared_memory or actors, got '" + transport + "'");
  }
  if (!vm["inline-below"].defaulted() && !(processes && transport != "middleman"))
    throw po::error("--inline-below applies only with --processes and the data plane");
  parse_byte_size("--inline-below", inline_text);
  if (!vm["small-bytes"].defaulted() && !(processes && transport == "direct"))
    throw po::error("--small-bytes applies only with --processes and --transport direct");
  const size_t small_bytes =
      processes && transport == "direct" ? parse_byte_size("--small-bytes", small_text) : 0;
  if (!vm["large-bytes"].defaulted() && !(processes && transport == "direct"))
    throw po::error("--large-bytes applies only with --processes and --transport direct");
  if (!vm["cross-memory"].defaulted() && !(processes && transport == "direct"))
    throw po::error("--cross-memory applies only with --processes and --transport direct");
  try {
    parse_cross_memory_policy(cross_memory, "--cross-memory");  // the peers parse it again
  } catch (const Error& e) {
    throw po::error(e.what());
  }
  const size_t large_bytes =
      processes && transport == "direct" ? parse_byte_size("--large-bytes", large_text) : 0;
  std::vector<size_t> sizes;
  std::stringstream list(sizes_text);
  for (std::string item; std::getline(list, item, ',');) {
    sizes.push_back(parse_byte_size("--sizes", item));
    // Rows all-reduce bytes / 4 float32 elements: a smaller size would reduce nothing.
    if (sizes.back() < sizeof(float))
      throw po::error("--sizes: '" + item + "' is " + std::to_string(sizes.back()) +
                      " byte(s), less than one float32 element (4 bytes)");
  }

  // Limits first: the TCP measurement forks, which must happen before any thread exists.
  double tcp_gbps = processes ? measure_tcp_loopback_gbps(size_t(16) << 20, 5) : 0;
  double memcpy_gbps = measure_memcpy_gbps(size_t(256) << 20, 5);

  std::vector<Row> rows;
  int group = processes ? processes : replicas;
  if (processes) {
    std::string binary = current_executable(), secret = random_secret();
    for (size_t bytes : sizes) {
      int reps = int(std::max<size_t>(
          3, std::min<size_t>(200, (size_t(256) << 20) / std::max<size_t>(bytes, 1))));
      auto reports = run_collective_processes(
          binary, processes,
          {"--algo", algo, "--count", std::to_string(bytes / 4), "--repeat",
           std::to_string(reps + 1), "--timeout-ms", "60000", "--transport", transport,
           "--inline-below", inline_text, "--small-bytes", std::to_string(small_bytes),
           "--large-bytes", std::to_string(large_bytes), "--cross-memory", cross_memory},
          secret, 300);
      double worst = 0;
      for (auto& r : reports) {
        if (!r.ok) throw unavailable("a rank failed: " + r.line);
        worst = std::max(worst, r.seconds_per_all_reduce);
      }
      bool direct =
          transport != "middleman" && bytes >= parse_byte_size("--inline-below", inline_text);
      rows.push_back({algo, processes, bytes, worst * 1e6,
                      bytes <= small_bytes || (large_bytes > 0 && bytes >= large_bytes)
                          ? "shared_memory_rendezvous"
                      : !direct            ? "peer_actors_over_middleman"
                      : transport == "tcp" ? "peer_actors_data_plane_tcp"
                                           : "peer_actors_data_plane_shared_memory"});
    }
  } else {
    Runtime runtime;
    std::vector<std::string> devices;
    for (int i = 0; i < replicas; ++i) devices.push_back("CPU:" + std::to_string(i));
    MirroredOptions mo;
    mo.cross_device_ops = kind;
    if (transport == "actors") {
      mo.all_reduce.shared_memory = false;
      mo.all_reduce.peer_threshold_bytes = 0;
    }
    MirroredStrategy strategy(runtime.system(), devices, mo);
    const auto& cross_device = strategy.extended().cross_device_ops();
    for (size_t bytes : sizes)
      rows.push_back({algo, replicas, bytes, time_in_process(strategy, bytes),
                      std::string(transport_name(cross_device.all_reduce_transport(
                          replicas, true, int64_t(bytes), false)))});
  }

  const double bus_factor = group > 1 ? 2.0 * (group - 1) / group : 1.0;
  if (json) {
    std::printf("{\"limits\":{\"memcpy_gbps\":%.3f", memcpy_gbps);
    if (processes) std::printf(",\"tcp_gbps\":%.3f", tcp_gbps);
    std::printf("},\"results\":[");
    for (size_t i = 0; i < rows.size(); ++i) {
      auto& r = rows[i];
      double algbw = double(r.bytes) / (r.time_us * 1e-6) / 1e9;
      std::printf(
          "%s{\"algo\":\"%s\",\"transport\":\"%s\",\"replicas\":%d,\"bytes\":%zu,"
          "\"time_us\":%.3f,\"algbw_gbps\":%.3f,\"busbw_gbps\":%.3f}",
          i ? "," : "", r.algo.c_str(), r.transport.c_str(), r.replicas, r.bytes, r.time_us, algbw,
          algbw * bus_factor);
    }
    std::printf("]}\n");
    return 0;
  }
  std::printf("# all-reduce %s, %d %s; memcpy %.2f GB/s", algo.c_str(), group,
              processes ? (transport == "middleman" ? "processes (middleman)"
                           : transport == "tcp"     ? "processes (data plane, TCP)"
                                                    : "processes (data plane, shared memory)")
                        : "replicas (in process)",
              memcpy_gbps);
  if (processes) std::printf(", raw TCP %.2f GB/s", tcp_gbps);
  std::printf("\n%12s %12s %8s %12s %10s %10s  %s\n", "bytes", "count", "dtype", "time_us",
              "algbw_GB/s", "busbw_GB/s", "transport");
  for (auto& r : rows) {
    double algbw = double(r.bytes) / (r.time_us * 1e-6) / 1e9;
    std::printf("%12zu %12zu %8s %12.2f %10.3f %10.3f  %s\n", r.bytes, r.bytes / 4, "float32",
                r.time_us, algbw, algbw * bus_factor, r.transport.c_str());
  }
  return 0;
}

}  // namespace troupe
