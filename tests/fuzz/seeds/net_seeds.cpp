// Writes the seed corpora of the message and network fuzz targets (tensor_proto, tensor_wire,
// bulk_frame, handshake, shared_secret) from troupe's own writers:
//   fuzz_net_seeds <tests/fuzz/corpus>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "messages/auth_msg.hpp"
#include "messages/caf_compat.hpp"
#include "messages/tensor_chunking.hpp"
#include "messages/tensor_msg.hpp"
#include "messages/tensor_proto.hpp"
#include "tests/fuzz/seeds/seed_writer.hpp"

using namespace troupe;
namespace fs = std::filesystem;

namespace {

using fuzz::seed;

template <class T>
std::string caf_bytes(T value) {
  std::vector<char> out;
  if (wire::to_bytes(value, out)) std::abort();
  return {out.begin(), out.end()};
}

std::vector<Tensor> tensors() {
  return {Tensor::from_vector<float>(Shape(std::vector<int64_t>{2, 3}), {1, 2, 3, 4, 5, 6}),
          Tensor::from_scalar<int64_t>(-42),
          Tensor::from_vector<int32_t>(Shape(std::vector<int64_t>{3}), {7, 8, 9}),
          Tensor::zeros(DType::float64, Shape(std::vector<int64_t>{0, 4}))};
}

// One bulk frame as BulkClient sends it: u8 op, u8 dtype, u32 rank, i64 dims, u64 bytes, data.
std::string bulk_frame(uint8_t op, const Tensor& t) {
  std::string out(1, char(op));
  out.push_back(char(t.dtype()));
  auto put = [&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); };
  uint32_t rank = uint32_t(t.shape().rank());
  uint64_t bytes = t.byte_size();
  put(&rank, 4);
  put(t.shape().dims().data(), 8 * rank);
  put(&bytes, 8);
  if (bytes) put(t.raw_data(), bytes);
  return out;
}

void message_seeds() {
  int n = 0;
  for (const Tensor& t : tensors()) {
    std::string name = std::to_string(n++);
    seed("tensor_proto", "tensor-" + name, serialize_tensor_proto(t));
    seed("tensor_wire", "tensor_msg-" + name, std::string(1, '\0') + caf_bytes(tensor_msg{9, t}));
    seed("tensor_wire", "chunks-" + name,
         std::string(1, '\1') + caf_bytes(split_into_chunks(t, 5, 8)));
    seed("bulk_frame", "sink-" + name, std::string(1, '\0') + bulk_frame(1, t));
    seed("bulk_frame", "echo-" + name, std::string(1, '\0') + bulk_frame(2, t));
  }
  std::string two = bulk_frame(2, tensors()[0]) + bulk_frame(1, tensors()[1]);
  seed("bulk_frame", "two-frames", std::string(1, '\0') + two);
  seed("bulk_frame", "forged-proof", std::string(1, '\1') + std::string(32, 'x') + two);
  seed("tensor_wire", "undefined", std::string(1, '\0') + caf_bytes(tensor_msg{1, Tensor{}}));
  std::string nonce(32, '\x5a'), mac(32, '\xa5');
  seed("handshake", "proof", std::string(1, '\0') + caf_bytes(proof_msg{nonce, mac}));
  seed("handshake", "proof-fresh-nonce", std::string(1, '\1') + caf_bytes(proof_msg{nonce, mac}));
  seed("handshake", "challenge", std::string(1, '\0') + caf_bytes(challenge_msg{nonce}));
  seed("shared_secret", "line", "correct horse battery staple\n");
  seed("shared_secret", "crlf", "s3cret\r\n\r\n");
  seed("shared_secret", "only-newlines", "\n\n");
  seed("shared_secret", "binary", std::string("\0\x01\xff secret", 10));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <tests/fuzz/corpus>\n", argv[0]);
    return 2;
  }
  fuzz::seed_root() = argv[1];
  message_seeds();
  return 0;
}
