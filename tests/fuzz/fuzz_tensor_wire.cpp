// The tensor wire format (messages/tensor_wire) as CAF's binary deserializer meets it in a
// message from another process. Byte 0 picks what the rest is: a tensor_msg, or a sequence of
// tensor_chunk_msg fed to the ChunkAssembler that reassembles large tensors (whose shape, count
// and ranges also come from the wire). Decoding must fail with a caf::error, and assembly with a
// troupe::Error, never by crashing or allocating what the message does not carry.
#include <vector>

#include "core/status.hpp"
#include "messages/tensor_chunking.hpp"
#include "messages/tensor_msg.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace troupe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char* bytes = reinterpret_cast<const char*>(data + 1);
  size_t n = size - 1;
  if (data[0] & 1) {
    std::vector<tensor_chunk_msg> chunks;
    if (wire::from_bytes(bytes, n, chunks)) return 0;
    try {
      ChunkAssembler assembler;
      for (const auto& chunk : chunks)
        if (assembler.add(chunk)) {
          Tensor whole = assembler.take();
          fuzz::require(whole.defined(), "a complete transfer yields a tensor");
          break;
        }
    } catch (const Error&) {
    }
    return 0;
  }
  tensor_msg msg;
  if (wire::from_bytes(bytes, n, msg)) return 0;
  // Accepted: re-encoding gives the same bytes (the format has one encoding per tensor).
  std::vector<char> again;
  fuzz::require(!wire::to_bytes(msg, again), "an accepted tensor re-encodes");
  fuzz::require(again == std::vector<char>(bytes, bytes + n), "re-encoding is byte-identical");
  return 0;
}
