// The chunked tensor stream of the ps bulk connection (net/bulk_tensor_stream.hpp) over a
// socketpair: round trips of several chunks (a request prefix ahead of them, partial sends of the
// two-part writes), and every malformed descriptor or chunk refused with its field and value
// named, before anything is allocated.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <thread>
#include <vector>

#include "net/bulk_tensor_stream.hpp"
#include "net/socket_io.hpp"

using namespace troupe;

namespace {

struct SocketPair {
  int a = -1, b = -1;
  SocketPair() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    a = fds[0];
    b = fds[1];
  }
  ~SocketPair() {
    if (a >= 0) ::close(a);
    if (b >= 0) ::close(b);
  }
};

// Raw bytes of a descriptor: dtype, rank, dims, byte_count, chunk_bytes.
std::vector<char> descriptor(uint8_t dtype, std::vector<int64_t> dims, uint64_t bytes,
                             uint64_t chunk) {
  std::vector<char> out(1 + 4 + 8 * dims.size() + 16);
  uint32_t rank = uint32_t(dims.size());
  out[0] = char(dtype);
  std::memcpy(out.data() + 1, &rank, 4);
  std::memcpy(out.data() + 5, dims.data(), 8 * dims.size());
  std::memcpy(out.data() + 5 + 8 * dims.size(), &bytes, 8);
  std::memcpy(out.data() + 13 + 8 * dims.size(), &chunk, 8);
  return out;
}

void append_u64(std::vector<char>& out, uint64_t v) {
  const char* p = reinterpret_cast<const char*>(&v);
  out.insert(out.end(), p, p + 8);
}

// What the reader says about `bytes` followed by the end of the stream.
std::string read_problem(std::vector<char> bytes) {
  SocketPair s;
  std::thread writer([&] {
    net::write_all(s.a, bytes.data(), bytes.size());
    ::shutdown(s.a, SHUT_WR);
  });
  Tensor out;
  std::string problem = net::read_tensor_chunked(s.b, out, nullptr);
  writer.join();
  return problem;
}

}  // namespace

TEST(BulkTensorStream, ATensorOfSeveralChunksArrivesExactlyAndItsBufferIsReused) {
  SocketPair s;
  Tensor sent(DType::float32, Shape{3, 1000});
  for (int64_t i = 0; i < sent.num_elements(); ++i) sent.data<float>()[i] = float(i) * 0.5f;
  std::atomic<uint64_t> progress{0};
  std::string write_problem;
  std::thread writer([&] {
    for (int k = 0; k < 2; ++k)
      write_problem += net::write_tensor_chunked(s.a, sent, 5000, &progress);
  });
  net::ReceiveBuffers buffers;
  Tensor first, second;
  EXPECT_EQ(net::read_tensor_chunked(s.b, first, &buffers), "");
  const void* first_bytes = first.raw_data();
  first = Tensor();  // dropped: its buffer may carry the next one
  EXPECT_EQ(net::read_tensor_chunked(s.b, second, &buffers), "");
  writer.join();
  EXPECT_EQ(write_problem, "");
  EXPECT_EQ(progress.load(), 2 * sent.byte_size());
  EXPECT_EQ(second.shape(), sent.shape());
  EXPECT_EQ(std::memcmp(second.raw_data(), sent.raw_data(), sent.byte_size()), 0);
  EXPECT_EQ(second.raw_data(), first_bytes);
}

TEST(BulkTensorStream, MalformedDescriptorsAreNamed) {
  EXPECT_EQ(read_problem(descriptor(7, {4}, 16, 16)), "bad tensor descriptor: dtype 7");
  EXPECT_EQ(read_problem(descriptor(1, std::vector<int64_t>(33, 1), 4, 4)),
            "bad tensor descriptor: rank 33 (at most 32)");
  EXPECT_EQ(read_problem(descriptor(1, {-2}, 0, 4)),
            "bad tensor descriptor: dimension -2 (negative, or the tensor exceeds 17179869184 "
            "bytes)");
  EXPECT_EQ(read_problem(descriptor(1, {int64_t(1) << 40}, 0, 4)),
            "bad tensor descriptor: dimension 1099511627776 (negative, or the tensor exceeds "
            "17179869184 bytes)");
  EXPECT_EQ(read_problem(descriptor(1, {4}, 12, 16)),
            "bad tensor descriptor: byte_count 12, shape needs 16");
  EXPECT_EQ(read_problem(descriptor(1, {4}, 16, 0)),
            "bad tensor descriptor: chunk_bytes 0 (1 .. 67108864)");
  EXPECT_EQ(read_problem(descriptor(1, {4}, 16, (uint64_t(64) << 20) + 1)),
            "bad tensor descriptor: chunk_bytes 67108865 (1 .. 67108864)");
  EXPECT_EQ(read_problem({1, 1, 0, 0, 0, 5}), "connection lost inside the tensor descriptor");
  EXPECT_EQ(read_problem({}), "connection lost before the tensor descriptor");
}

TEST(BulkTensorStream, MalformedChunksAreNamed) {
  auto with_chunk = [](uint64_t offset, uint64_t length) {
    auto bytes = descriptor(1, {4}, 16, 8);
    append_u64(bytes, offset);
    append_u64(bytes, length);
    return bytes;
  };
  EXPECT_EQ(read_problem(with_chunk(8, 8)), "bad chunk: offset 8, expected 0");
  EXPECT_EQ(read_problem(with_chunk(0, 0)),
            "bad chunk: length 0 at offset 0 (chunk_bytes 8, total 16)");
  EXPECT_EQ(read_problem(with_chunk(0, 12)),
            "bad chunk: length 12 at offset 0 (chunk_bytes 8, total 16)");
  EXPECT_EQ(read_problem(with_chunk(0, 8)),
            "connection lost mid-chunk after 0 of 16 payload bytes");
  EXPECT_EQ(read_problem(descriptor(1, {4}, 16, 8)),
            "connection lost before a chunk header after 0 of 16 payload bytes");
}

TEST(BulkTensorStream, AWriterWhosePeerIsGoneSaysHowFarItGot) {
  SocketPair s;
  ::close(s.b);
  s.b = -1;
  Tensor t(DType::float32, Shape{16});
  EXPECT_EQ(net::write_tensor_chunked(s.a, t, 8),
            "connection lost while sending the descriptor after 0 of 64 payload bytes");
}

namespace {

// Bytes whose values depend on their position, so that a slip of one byte shows.
std::vector<char> numbered(size_t n, int seed) {
  std::vector<char> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = char((i * 131 + size_t(seed)) % 251);
  return out;
}

// A small send buffer: sendmsg takes part of a write, so the remainder logic runs.
void shrink_send_buffer(int fd) {
  int bytes = 4096;
  ASSERT_EQ(::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes), 0);
}

}  // namespace

TEST(BulkTensorStream, TheTwoPartWriteSurvivesPartialSendsAndEmptyParts) {
  SocketPair s;
  shrink_send_buffer(s.a);
  const auto head = numbered(37, 1), body = numbered(300000, 2);
  std::vector<char> expected = head;
  expected.insert(expected.end(), body.begin(), body.end());
  expected.insert(expected.end(), body.begin(), body.end());
  expected.insert(expected.end(), head.begin(), head.end());
  bool written = false;
  std::thread writer([&] {
    written = net::write_all(s.a, head.data(), head.size(), body.data(), body.size()) &&
              net::write_all(s.a, nullptr, 0, body.data(), body.size()) &&
              net::write_all(s.a, head.data(), head.size(), nullptr, 0);
  });
  std::vector<char> got(expected.size());
  EXPECT_TRUE(net::read_all(s.b, got.data(), got.size()));
  writer.join();
  EXPECT_TRUE(written);
  EXPECT_EQ(got, expected);
}

// The prefix (a request the tensor follows) arrives first, then the tensor exactly, whether the
// payload is several chunks written in partial sends or nothing at all.
TEST(BulkTensorStream, APrefixLeavesAheadOfTheDescriptorAndTheTensorArrivesExactly) {
  SocketPair s;
  shrink_send_buffer(s.a);
  Tensor sent(DType::float32, Shape{3, 100000});
  for (int64_t i = 0; i < sent.num_elements(); ++i) sent.data<float>()[i] = float(i % 9973);
  const Tensor empty(DType::float32, Shape{0, 4});
  const std::string prefix = "request header";
  std::string write_problem;
  std::thread writer([&] {
    write_problem += net::write_tensor_chunked(s.a, sent, 700001, nullptr, prefix);
    write_problem += net::write_tensor_chunked(s.a, empty, 8, nullptr, prefix);
  });
  for (const Tensor* expected : std::vector<const Tensor*>{&sent, &empty}) {
    std::string got_prefix(prefix.size(), '\0');
    ASSERT_TRUE(net::read_all(s.b, got_prefix.data(), got_prefix.size()));
    EXPECT_EQ(got_prefix, prefix);
    Tensor got;
    EXPECT_EQ(net::read_tensor_chunked(s.b, got, nullptr), "");
    EXPECT_EQ(got.shape(), expected->shape());
    if (expected->byte_size() > 0) {
      EXPECT_EQ(std::memcmp(got.raw_data(), expected->raw_data(), expected->byte_size()), 0);
    }
  }
  writer.join();
  EXPECT_EQ(write_problem, "");
}
