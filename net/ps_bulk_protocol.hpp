#pragma once
// The ps bulk connection: how a client process moves large dense values to and from a ps task
// beside CAF (actors/ps_bulk_server.hpp serves it, coordinator/ps/ps_bulk_client.hpp dials it).
//
// Handshake, before anything is parsed: server -> client a 32-byte nonce; client -> server
// HMAC-SHA256(secret, "troupe-ps-bulk-v1" + nonce); server -> client u8 1 (accepted) or u8 0
// (refused, then it closes and logs "refused a ps bulk connection from H:P: wrong shared secret").
// Requests (host byte order; both ends are the same build): u8 op, u32 header_bytes, the header
// (the CAF binary form of the ps message with its large tensor left undefined: a gather's or a
// sparse apply's row indices stay in it), and for a write or an apply the tensor as a chunked
// stream (net/bulk_tensor_stream.hpp). Replies: u8 status; 0 = ok, then the value (read and
// gather: chunked stream) or u32 header_bytes + the ps_ack_msg; 1 = error, then i32 code, u32
// length, the message — the shard's own error, exactly as through CAF.

#include <cstdint>
#include <string>

namespace troupe::net {

enum class PsBulkOp : uint8_t { read = 1, write = 2, apply = 3, gather = 4 };
constexpr uint8_t kPsBulkOk = 0, kPsBulkError = 1;
/// Largest request or reply header (a ps message without its value: names, rule, step id).
constexpr uint32_t kMaxPsBulkHeaderBytes = 1u << 20;
/// Largest index tensor a client puts in a header (the rest of the header is names, a rule and
/// a step id); more indices go through CAF.
constexpr uint64_t kMaxPsBulkIndexBytes = kMaxPsBulkHeaderBytes / 2;
/// Largest error message carried back.
constexpr uint32_t kMaxPsBulkErrorBytes = 1u << 16;

/// HMAC-SHA256(secret, "troupe-ps-bulk-v1" + nonce): what a client proves.
std::string ps_bulk_proof(const std::string& secret, const std::string& nonce);

/// Server side of the handshake on a fresh connection (reads bounded by the socket's timeout).
/// True when the client proved the secret; false otherwise (the refusal byte was sent).
bool ps_bulk_accept(int fd, const std::string& secret);

/// Client side: answers the challenge; throws unavailable when the server sent none and
/// failed_precondition ("authentication failed at ps bulk port H:P ...") when it refused.
void ps_bulk_authenticate(int fd, const std::string& secret, const std::string& peer);

}  // namespace troupe::net
