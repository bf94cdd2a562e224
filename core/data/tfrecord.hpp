#pragma once
// TFRecord framing, byte-compatible with TensorFlow:
//   uint64 length (LE) | uint32 masked CRC32C of the 8 length bytes | data | uint32 masked CRC32C
//   of data
// Errors name the file and the byte offset of the bad record.

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace troupe::data {

/// The framed bytes of one record (header, data, footer).
std::string tfrecord_frame(std::string_view data);

/// Appends records to a file (truncating it on open).
class TFRecordWriter {
 public:
  /// Throws not_found/unavailable naming the path when it cannot be created.
  explicit TFRecordWriter(std::string path);
  ~TFRecordWriter();
  TFRecordWriter(const TFRecordWriter&) = delete;
  TFRecordWriter& operator=(const TFRecordWriter&) = delete;
  void write(std::string_view record);
  /// Hands buffered records to the OS (readers such as TensorBoard see them).
  void flush();
  /// Flushes and closes; throws on a write error. The destructor closes quietly.
  void close();

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

/// Reads records in order; the returned view stays valid until the next call.
class TFRecordReader {
 public:
  /// Throws not_found naming the path when the file cannot be opened.
  explicit TFRecordReader(std::string path);
  ~TFRecordReader();
  TFRecordReader(const TFRecordReader&) = delete;
  TFRecordReader& operator=(const TFRecordReader&) = delete;
  /// The next record, nullopt at a clean end of file; throws data_loss naming the file and byte
  /// offset on a truncated record or either CRC mismatch.
  std::optional<std::string_view> next();
  /// Byte offset of the next record (what to seek() to, to resume there).
  uint64_t offset() const { return offset_; }
  void seek(uint64_t offset);
  const std::string& path() const { return path_; }

 private:
  bool read_exact(char* dst, size_t n, uint64_t record_offset, const char* part);
  std::string path_;
  std::FILE* file_ = nullptr;
  uint64_t offset_ = 0;
  std::string buffer_;
};

}  // namespace troupe::data
