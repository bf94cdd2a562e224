#pragma once
// Byte encoding of an iterator's position. Each stage of a pipeline writes its own fields in
// order (its name first, so a state restored into a different pipeline is caught), then its
// input's. seal() frames the whole with a magic word and a CRC32C so corrupt bytes are rejected.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/data/element.hpp"

namespace troupe::data {

/// Appends fixed-width little-endian fields to a byte string.
class StateWriter {
 public:
  void u64(uint64_t v);
  void i64(int64_t v) { u64(uint64_t(v)); }
  void str(std::string_view s);
  void tensor(const Tensor& t);
  void element(const Element& e);
  /// Stage name; the reader checks it with expect_tag().
  void tag(std::string_view name) { str(name); }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

/// Reads what StateWriter wrote; every read past the end or of an impossible value throws
/// data_loss("iterator state: ...").
class StateReader {
 public:
  explicit StateReader(std::string_view bytes) : bytes_(bytes) {}
  uint64_t u64();
  int64_t i64() { return int64_t(u64()); }
  std::string str();
  Tensor tensor();
  Element element();
  /// Reads a stage name and throws unless it equals `name`.
  void expect_tag(std::string_view name);
  bool at_end() const { return pos_ == bytes_.size(); }

 private:
  std::string_view take(size_t n);
  std::string_view bytes_;
  size_t pos_ = 0;
};

/// Frames a state: magic "TRPITER1", payload length, payload, masked CRC32C of the payload.
std::string seal_state(const std::string& payload);
/// Checks magic, length and checksum; returns the payload or throws data_loss.
std::string_view unseal_state(std::string_view sealed);

}  // namespace troupe::data
