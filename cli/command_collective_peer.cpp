// `troupe collective-peer`: one rank of a multi-process collective group. It publishes its
// collective peer actor behind the shared-secret gatekeeper on 127.0.0.1 (port 0), prints
// `PORT <n>`, reads `PEERS <port of rank 0> ... <port of rank n-1>` from stdin, connects to every
// other rank through CAF's middleman, runs `--repeat` all-reduces of closed-form inputs, prints
// `RESULT ok <seconds per all-reduce> <sum of all result elements> <SHA-256 of the result bytes>`
// (or `RESULT error <why>`; with `--concurrent C` the digests of all C results, comma-separated);
// `--seed S` replaces the closed-form inputs by seeded fractions,
// then waits for `EXIT` on stdin so that no rank leaves while others still need its messages.
// With `--tls-dir DIR --node NAME` (a `troupe cluster-certs` directory) every connection is
// mutual TLS: a peer without a certificate from DIR/ca.pem is dropped during the handshake,
// before CAF reads a message from it; the shared-secret proof still runs on top.
// With `--transport direct` (the default) the chunks of all-reduces of at least --inline-below
// bytes travel over the collective data plane (direct TCP connections authenticated with the
// same secret, see net/collective_data_plane.hpp); CAF carries the control. The data listener's
// address is printed on stderr as `troupe collective-peer: rank R data plane on HOST:PORT`.
// With `--small-bytes N` (and --transport direct) all-reduces of at most N bytes meet in a
// shared-memory rendezvous instead, as a multi-worker strategy's small packs do on one host
// (coordinator/cluster/small_collective_rendezvous.hpp). With `--large-bytes N` all-reduces of at
// least N bytes meet there too, in pieces of --chunk-bytes pipelined over the two slots of each
// rank, summed on the calling thread: no actor, no reader thread, one copy into shared memory;
// from 1 MiB each rank reads the others' memory directly instead (--cross-memory).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>

#include "actors/collective_peer.hpp"
#include "cli/collective_peer_input.hpp"
#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "coordinator/cluster/cross_memory_all_reduce.hpp"
#include "coordinator/cluster/small_collective_rendezvous.hpp"
#include "core/collective/algorithm_choice.hpp"
#include "core/collective/closed_form.hpp"
#include "messages/atoms.hpp"
#include "messages/collective_messages.hpp"
#include "messages/error_channel.hpp"
#include "messages/system_config.hpp"
#include "messages/tensor_msg.hpp"
#include "messages/timed_request.hpp"
#include "net/gatekeeper.hpp"
#include "net/shared_secret.hpp"
#include "net/tls_transport.hpp"
#include "net/wire_client.hpp"

namespace po = boost::program_options;

namespace troupe::cli {
namespace {

std::vector<uint16_t> read_peer_ports(int size) {
  std::string line;
  if (!std::getline(std::cin, line)) throw unavailable("stdin closed before the PEERS line");
  std::istringstream in(line);
  std::string word;
  in >> word;
  if (word != "PEERS") throw invalid_argument("expected 'PEERS <ports>', got '" + line + "'");
  std::vector<uint16_t> ports;
  unsigned port = 0;
  while (in >> port) ports.push_back(uint16_t(port));
  if (int(ports.size()) != size)
    throw invalid_argument("PEERS lists " + std::to_string(ports.size()) +
                           " ports for a group of " + std::to_string(size));
  return ports;
}

double checksum(const Tensor& t) {
  double s = 0;
  dispatch_dtype(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    for (int64_t i = 0; i < t.num_elements(); ++i) s += double(t.data<T>()[i]);
  });
  return s;
}

}  // namespace

int run_collective_peer_command(const std::vector<std::string>& args) {
  po::options_description options("troupe collective-peer options");
  int rank = 0, size = 2, repeat = 1;
  std::string algo = "ring", dtype_name = "float32", count_text = "1M", chunk_text = "1MiB";
  std::string secret_file, tls_dir, node, transport = "direct", inline_text = "0";
  std::string small_text = "0", large_text = "0", cross_memory = "auto";
  int timeout_ms = 30000;
  uint64_t seed = 0;
  int concurrent = 1;
  options.add_options()("rank", po::value(&rank)->required(), "this process's rank, 0..size-1")(
      "size", po::value(&size)->required(), "number of ranks")(
      "count", po::value(&count_text)->default_value("1M"),
      "elements per all-reduce (K/M suffixes)")(
      "dtype", po::value(&dtype_name)->default_value("float32"), "float32, float64, int32, int64")(
      "algo", po::value(&algo)->default_value("ring"), "ring, hierarchical or one_device")(
      "chunk-bytes", po::value(&chunk_text)->default_value("1MiB"), "largest chunk message")(
      "repeat", po::value(&repeat)->default_value(1), "all-reduces to run (timed after the first)")(
      "timeout-ms", po::value(&timeout_ms)->default_value(30000),
      "per all-reduce; a dead peer fails")("secret-file", po::value(&secret_file),
                                           "shared secret file (default: $TROUPE_SECRET)")(
      "tls-dir", po::value(&tls_dir), "mutual TLS with the certificates of `troupe cluster-certs`")(
      "node", po::value(&node), "this node's name in --tls-dir (uses NAME.pem and NAME.key)")(
      "transport", po::value(&transport)->default_value("direct"),
      "direct (chunks over the authenticated data plane: a shared-memory ring to ranks on this "
      "host, TCP to others), tcp (the data plane over TCP only) or middleman (chunks in CAF "
      "messages)")("seed", po::value(&seed)->default_value(0),
                   "0: closed-form integer inputs; else seeded fractions in [-1, 1)")(
      "concurrent", po::value(&concurrent)->default_value(1),
      "collectives started together per round (inputs seeded seed, seed+1, ...; the RESULT line "
      "lists every result's digest)")(
      "inline-below", po::value(&inline_text)->default_value("0"),
      "with --transport direct or tcp: all-reduces smaller than this stay in CAF messages")(
      "small-bytes", po::value(&small_text)->default_value("0"),
      "with --transport direct: all-reduces of at most this many bytes meet in a shared-memory "
      "rendezvous (0: never)")(
      "large-bytes", po::value(&large_text)->default_value("0"),
      "with --transport direct: all-reduces of at least this many bytes are summed through the "
      "shared-memory rendezvous in pieces of --chunk-bytes, on the calling thread (0: never)")(
      "cross-memory", po::value(&cross_memory)->default_value("auto"),
      "on: large all-reduces of at least 1 MiB read the other ranks' memory directly where every "
      "rank can (process_vm_readv), else take the pieces; auto: like on, where "
      "process_vm_readv is fast enough here for that to pay (measured once); off: always the "
      "pieces");
  po::variables_map vm;
  if (!parse_command_line("troupe collective-peer --rank R --size N [options]", args, options, vm))
    return 0;
  if (size < 1 || rank < 0 || rank >= size)
    throw po::error("--rank must be in [0, --size), got rank " + std::to_string(rank) + " of " +
                    std::to_string(size));
  if (repeat < 1) throw po::error("--repeat must be >= 1");
  if (concurrent < 1)
    throw po::error("--concurrent must be >= 1, got " + std::to_string(concurrent));
  const auto kind = parse_host_algo_option("--algo", algo);
  const DType dtype = parse_dtype(dtype_name);
  const int64_t count = int64_t(parse_byte_size("--count", count_text));
  const int64_t chunk_bytes = int64_t(parse_byte_size("--chunk-bytes", chunk_text));
  if (tls_dir.empty() != node.empty())
    throw po::error("--tls-dir and --node go together (got only " +
                    std::string(tls_dir.empty() ? "--node" : "--tls-dir") + ")");
  const bool tls = !tls_dir.empty();
  if (transport != "direct" && transport != "tcp" && transport != "middleman")
    throw po::error("--transport must be direct, tcp or middleman, got '" + transport + "'");
  const int64_t inline_below = int64_t(parse_byte_size("--inline-below", inline_text));
  const size_t small_bytes = parse_byte_size("--small-bytes", small_text);
  if (small_bytes > 0 && transport != "direct")
    throw po::error("--small-bytes needs --transport direct (ranks on this host), got '" +
                    transport + "'");
  const size_t large_bytes = parse_byte_size("--large-bytes", large_text);
  CrossMemoryPolicy cross_memory_policy;
  try {
    cross_memory_policy = parse_cross_memory_policy(cross_memory, "--cross-memory");
  } catch (const Error& e) {
    throw po::error(e.what());
  }
  if (large_bytes > 0 && transport != "direct")
    throw po::error("--large-bytes needs --transport direct (ranks on this host), got '" +
                    transport + "'");
  if (large_bytes > 0 && chunk_bytes < 64)
    throw po::error("--large-bytes needs --chunk-bytes of at least 64 (the pieces), got " +
                    std::to_string(chunk_bytes));
  // One slot per rank and parity holds a small all-reduce whole or one piece of a large one.
  const size_t slot_bytes =
      std::max(whole_lines(small_bytes), large_bytes > 0 ? whole_lines(size_t(chunk_bytes)) : 0);
  const std::string secret = load_shared_secret(secret_file);

  ActorSystemOptions system_options;
  if (tls) set_tls_from_dir(system_options, tls_dir, node);
  caf::actor_system_config cfg;
  configure_actor_system(cfg, system_options);
  caf::actor_system sys{cfg};
  CollectivePeerTransport peer_transport;
  peer_transport.data_plane = transport != "middleman";
  peer_transport.data.shared_memory = transport == "direct";
  peer_transport.data.secret = secret;
  peer_transport.data.io_timeout_ms = timeout_ms;
  peer_transport.inline_below_bytes = inline_below;
  auto group_failure = std::make_shared<GroupFailure>();
  peer_transport.failure = group_failure;
  std::shared_ptr<ShmRendezvous> offered, rendezvous;
  if (slot_bytes > 0 && size > 1 && rank == 0) {
    offered = offer_rendezvous(size, slot_bytes, large_bytes > 0 ? kLargeAllReduceDepth : 2);
    if (offered) peer_transport.rendezvous = offered->name();
  }
  auto peer = spawn_collective_peer(sys, peer_transport);
  auto gate = spawn_gatekeeper(sys, secret, peer);
  auto stop = [&] {
    caf::anon_send_exit(gate, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(peer, caf::exit_reason::user_shutdown);
  };
  auto published = publish_actor(sys, gate, 0, "127.0.0.1", tls);
  if (!published) {
    std::cerr << "troupe collective-peer: cannot listen: " << sys.render(published.error()) << "\n";
    stop();
    return 1;
  }
  if (tls)
    std::cerr << "troupe collective-peer: node " << node << " listens with mutual TLS ("
              << system_options.tls_certificate << ", peers verified against "
              << system_options.tls_cafile << ")\n";
  std::printf("PORT %u\n", unsigned(*published));
  std::fflush(stdout);

  int exit_code = 0;
  try {
    auto ports = read_peer_ports(size);
    std::vector<caf::actor> peers(static_cast<size_t>(size));
    WireClientOptions connect;
    connect.secret = secret;
    connect.timeout = std::chrono::milliseconds(timeout_ms);
    connect.tls = tls;
    // Each pair of ranks shares one connection: the higher rank dials the lower one and
    // announces its own peer; the lower rank learns it from that join message.
    peers[size_t(rank)] = peer;
    for (int r = 0; r < rank; ++r) {
      connect.port = ports[size_t(r)];
      peers[size_t(r)] = connect_to_service(sys, connect);
      caf::anon_send(peers[size_t(r)], collective_join_msg{rank, peer});
    }
    caf::anon_send(peer, collective_peers_msg{rank, peers});
    Tensor input = collective_peer_input(rank, count, dtype, seed);
    caf::scoped_actor self{sys};
    std::string not_ready;
    timed_request(self, peer, std::chrono::milliseconds(timeout_ms), ready_atom::value)
        .receive([](int32_t) {}, [&](caf::error& e) { not_ready = to_status(e).message(); });
    if (!not_ready.empty())
      throw unavailable("the group did not assemble within " + std::to_string(timeout_ms) +
                        " ms (a rank missing?): " + not_ready);
    // Prints where the data plane listens, or (traffic) what it carried.
    auto report_data_plane = [&](bool traffic) {
      if (!peer_transport.data_plane) return;
      timed_request(self, peer, std::chrono::milliseconds(timeout_ms), collective_data_atom::value)
          .receive(
              [&](std::string& host, uint16_t port, uint64_t sent, uint64_t received) {
                if (traffic)
                  std::cerr << "troupe collective-peer: rank " << rank << " data plane carried "
                            << sent << " payload bytes out, " << received << " in" << std::endl;
                else
                  std::cerr << "troupe collective-peer: rank " << rank << " data plane on " << host
                            << ":" << port << std::endl;
              },
              [&](caf::error& e) {
                throw unavailable(
                    "rank " + std::to_string(rank) +
                    " has no data plane after the group assembled: " + to_status(e).message());
              });
    };
    report_data_plane(false);
    if (slot_bytes > 0 && size > 1) {
      rendezvous = agree_on_rendezvous(sys, peers[0], rank, size, offered, *group_failure);
      if (rendezvous && small_bytes > 0)
        std::cerr << "troupe collective-peer: rank " << rank
                  << " small all-reduces (<= " << whole_lines(small_bytes)
                  << " bytes) meet in shared memory" << std::endl;
      if (rendezvous && large_bytes > 0)
        std::cerr << "troupe collective-peer: rank " << rank << " all-reduces of at least "
                  << large_bytes << " bytes are summed in shared memory in pieces of "
                  << rendezvous->slot_bytes() << " bytes"
                  << (cross_memory_allowed(cross_memory_policy)
                          ? " (from " + std::to_string(kCrossMemoryMinBytes) +
                                " bytes read from the other ranks' memory where every rank can; "
                                "--cross-memory " +
                                describe_cross_memory(cross_memory_policy) + ")"
                          : " (--cross-memory " + describe_cross_memory(cross_memory_policy) + ")")
                  << std::endl;
    }
    const bool meet =
        rendezvous && ((small_bytes > 0 && input.byte_size() <= whole_lines(small_bytes)) ||
                       (large_bytes > 0 && input.byte_size() >= large_bytes));
    // With --concurrent C, each round starts C collectives (instances k*C+1 .. k*C+C, inputs
    // seeded seed+j) before waiting for any: their chunks share the connections.
    std::vector<Tensor> inputs{input};
    for (int j = 1; j < concurrent; ++j)
      inputs.push_back(collective_peer_input(rank, count, dtype, seed + uint64_t(j)));
    std::vector<Tensor> results(inputs.size());
    Tensor result;
    double seconds = 0;
    CrossMemoryVotes votes;  // a refusal holds for every later all-reduce of this group
    for (int k = 0; k < repeat; ++k) {
      auto started = std::chrono::steady_clock::now();
      std::string failure;
      using handle = decltype(timed_request(self, peer, std::chrono::milliseconds(timeout_ms),
                                            collective_start_msg{}));
      std::vector<handle> pending;
      for (int j = 0; j < concurrent && meet; ++j) {
        try {
          results[size_t(j)] = rendezvous_all_reduce_sum(
              *rendezvous, rank, inputs[size_t(j)], std::chrono::milliseconds(timeout_ms),
              group_failure.get(), cross_memory_allowed(cross_memory_policy), &votes);
        } catch (const std::exception& e) {
          if (failure.empty()) failure = e.what();
        }
      }
      for (int j = 0; j < concurrent && !meet; ++j)
        pending.push_back(
            timed_request(self, peer, std::chrono::milliseconds(timeout_ms),
                          collective_start_msg{int64_t(k) * concurrent + j + 1, int32_t(kind), size,
                                               chunk_bytes, 0, 0, inputs[size_t(j)], Tensor{}}));
      for (size_t j = 0; j < pending.size(); ++j)
        pending[j].receive([&](tensor_msg& reply) { results[j] = std::move(reply.tensor); },
                           [&](caf::error& e) {
                             if (failure.empty()) failure = to_status(e).message();
                           });
      result = results[0];
      if (!failure.empty())
        throw unavailable("all-reduce " + std::to_string(k + 1) + " failed: " + failure);
      // The first all-reduce also pays for connection warm-up; time the rest when there are any.
      if (k > 0 || repeat == 1)
        seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    }
    report_data_plane(true);
    std::string digest = result_digest(result);
    for (size_t j = 1; j < results.size(); ++j) digest += "," + result_digest(results[j]);
    std::printf("RESULT ok %.9f %.17g %s\n", seconds / std::max(1, repeat - 1), checksum(result),
                digest.c_str());
  } catch (const std::exception& e) {
    std::printf("RESULT error %s\n", e.what());
    exit_code = 1;
  }
  std::fflush(stdout);
  // Stay in the group until told to leave (EXIT or stdin closed), also after an error: a rank
  // that left at once would look to the others like one more failure, hiding the first.
  std::string line;
  while (std::getline(std::cin, line) && line != "EXIT") {
  }
  stop();
  return exit_code;
}

}  // namespace troupe::cli
