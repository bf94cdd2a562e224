// `troupe echo`: connect to a `troupe serve` node, authenticate, send a deterministic tensor
// through it and back, check every byte.
#include <chrono>
#include <cstdio>
#include <iostream>

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "messages/system_config.hpp"
#include "net/bulk_channel.hpp"
#include "net/shared_secret.hpp"
#include "net/wire_client.hpp"

namespace po = boost::program_options;

namespace troupe::cli {
namespace {

// A pattern in which every 4-byte word differs from its neighbours, so a shifted, dropped or
// duplicated chunk cannot go unnoticed.
Tensor pattern_tensor(size_t bytes, uint32_t seed) {
  Tensor t(DType::int32, Shape{int64_t(bytes / 4)});
  auto* p = t.data<int32_t>();
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = int32_t(uint32_t(i) * 2654435761u ^ seed);
  return t;
}

int64_t first_mismatch(const Tensor& sent, const Tensor& back) {
  if (back.dtype() != sent.dtype() || back.shape() != sent.shape()) return 0;
  const auto* a = sent.data<int32_t>();
  const auto* b = back.data<int32_t>();
  for (int64_t i = 0; i < sent.num_elements(); ++i)
    if (a[i] != b[i]) return i;
  return -1;
}

// Each chunk is one CAF message: below a few KiB the per-message cost dominates (1 MiB in 1-element
// chunks took 18 s), above 1 GiB one chunk is held whole on both sides; neither is a useful test.
constexpr size_t kMinChunkBytes = size_t(4) << 10;
constexpr size_t kMaxChunkBytes = size_t(1) << 30;

size_t chunk_bytes_option(const std::string& text) {
  size_t bytes = parse_byte_size("chunk-bytes", text);
  if (bytes < kMinChunkBytes || bytes > kMaxChunkBytes)
    throw po::error("--chunk-bytes: '" + text + "' is " + std::to_string(bytes) +
                    " byte(s); use 4KiB to 1GiB (each chunk is one message: tiny chunks make a "
                    "transfer crawl, huge ones are held whole in memory)");
  return bytes;
}

// program_options reads "-1" into an unsigned option as its wrapped value (65535), so numbers are
// read signed and checked here.
int64_t in_range(const char* option, int64_t value, int64_t low, int64_t high) {
  if (value < low || value > high)
    throw po::error(std::string(option) + " must be in " + std::to_string(low) + ".." +
                    std::to_string(high) + ", got " + std::to_string(value));
  return value;
}

}  // namespace

int run_echo_command(const std::vector<std::string>& args) {
  po::options_description options("troupe echo options");
  std::string secret_file, bytes_text, chunk_text, path;
  WireClientOptions client;
  int64_t timeout_ms = 30000, port = 0, window = 2;
  uint32_t seed = 1;
  options.add_options()("port", po::value(&port)->required(), "port printed by `troupe serve`")(
      "host", po::value(&client.host)->default_value("127.0.0.1"), "node address")(
      "bytes", po::value(&bytes_text)->default_value("64MiB"), "tensor size (multiple of 4)")(
      "chunk-bytes", po::value(&chunk_text)->default_value("16MiB"),
      "bytes per message (4KiB-1GiB)")("window", po::value(&window)->default_value(2),
                                       "chunk requests in flight")(
      "timeout-ms", po::value(&timeout_ms)->default_value(30000), "per-request timeout")(
      "seed", po::value(&seed)->default_value(1), "pattern seed")(
      "path", po::value(&path)->default_value("middleman"), "middleman | bulk")(
      "secret-file", po::value(&secret_file), "shared secret file (default: $TROUPE_SECRET)");
  po::variables_map vm;
  if (!parse_command_line("troupe echo --port N [options]", args, options, vm)) return 0;
  size_t bytes = parse_byte_size("bytes", bytes_text);
  if (bytes % 4 != 0) throw po::error("--bytes: " + bytes_text + " is not a multiple of 4");
  client.chunk_bytes = chunk_bytes_option(chunk_text);
  client.port = uint16_t(in_range("--port", port, 1, 65535));
  client.window = size_t(in_range("--window", window, 1, 1024));
  client.timeout = std::chrono::milliseconds(in_range("--timeout-ms", timeout_ms, 1, 86400000));
  if (path != "middleman" && path != "bulk")
    throw po::error("--path: '" + path + "' is neither 'middleman' nor 'bulk'");
  client.secret = load_shared_secret(secret_file);

  caf::actor_system_config cfg;
  configure_actor_system(cfg);
  caf::actor_system sys{cfg};
  auto service = connect_to_service(sys, client);
  std::printf("CONNECTED\n");
  std::fflush(stdout);
  Tensor sent = pattern_tensor(bytes, seed);
  auto start = std::chrono::steady_clock::now();
  Tensor back;
  if (path == "bulk") {
    BulkClient bulk(client.host, request_bulk_port(sys, service, client), client.secret,
                    int(timeout_ms));
    back = bulk.echo(sent);
  } else {
    back = echo_tensor(sys, service, sent, client);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int64_t bad = first_mismatch(sent, back);
  if (bad >= 0) {
    std::cerr << "troupe echo: echoed tensor differs from what was sent at element " << bad
              << " (sent " << sent.description() << ", got " << back.description() << ")\n";
    return 1;
  }
  std::printf("ECHO OK path=%s bytes=%zu seconds=%.3f\n", path.c_str(), bytes, seconds);
  return 0;
}

}  // namespace troupe::cli
