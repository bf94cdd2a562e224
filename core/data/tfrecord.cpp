#include "core/data/tfrecord.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "core/crc32c.hpp"
#include "core/status.hpp"

namespace troupe::data {
namespace {

void put_le(char* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = char(v >> (8 * i));
}
uint64_t get_le(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | uint8_t(p[i]);
  return v;
}

// A record longer than this is treated as corruption rather than allocated.
constexpr uint64_t kMaxRecordBytes = uint64_t(1) << 34;
// Above this a regular file is asked whether it holds the record before the buffer grows to it,
// so a corrupt length with a matching CRC cannot claim gigabytes that are not there.
constexpr uint64_t kCheckedRecordBytes = uint64_t(1) << 20;

}  // namespace

std::string tfrecord_frame(std::string_view data) {
  std::string out(12, '\0');
  put_le(out.data(), data.size(), 8);
  put_le(out.data() + 8, crc32c_mask(crc32c(out.data(), 8)), 4);
  out.append(data.data(), data.size());
  char footer[4];
  put_le(footer, crc32c_mask(crc32c(data)), 4);
  out.append(footer, 4);
  return out;
}

TFRecordWriter::TFRecordWriter(std::string path) : path_(std::move(path)) {
  file_ = std::fopen(path_.c_str(), "wb");
  if (!file_)
    throw not_found("TFRecord file '" + path_ + "': cannot create: " + std::strerror(errno));
}

TFRecordWriter::~TFRecordWriter() {
  if (file_) std::fclose(file_);
}

void TFRecordWriter::write(std::string_view record) {
  if (!file_) throw failed_precondition("TFRecord file '" + path_ + "': write after close");
  std::string framed = tfrecord_frame(record);
  if (std::fwrite(framed.data(), 1, framed.size(), file_) != framed.size())
    throw unavailable("TFRecord file '" + path_ + "': write failed: " + std::strerror(errno));
}

void TFRecordWriter::flush() {
  if (file_ && std::fflush(file_) != 0)
    throw unavailable("TFRecord file '" + path_ + "': flush failed: " + std::strerror(errno));
}

void TFRecordWriter::close() {
  if (!file_) return;
  int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0)
    throw unavailable("TFRecord file '" + path_ + "': close failed: " + std::strerror(errno));
}

TFRecordReader::TFRecordReader(std::string path) : path_(std::move(path)) {
  file_ = std::fopen(path_.c_str(), "rb");
  if (!file_)
    throw not_found("TFRecord file '" + path_ + "': cannot open: " + std::strerror(errno));
}

TFRecordReader::~TFRecordReader() {
  if (file_) std::fclose(file_);
}

void TFRecordReader::seek(uint64_t offset) {
  if (std::fseek(file_, long(offset), SEEK_SET) != 0)
    throw data_loss("TFRecord file '" + path_ + "': cannot seek to byte offset " +
                    std::to_string(offset));
  offset_ = offset;
}

bool TFRecordReader::read_exact(char* dst, size_t n, uint64_t record_offset, const char* part) {
  size_t got = std::fread(dst, 1, n, file_);
  if (got == n) return true;
  if (got == 0 && std::string_view(part) == "header") return false;  // clean end of file
  throw data_loss("TFRecord file '" + path_ + "': truncated record at byte offset " +
                  std::to_string(record_offset) + " (" + part + " wants " + std::to_string(n) +
                  " bytes, only " + std::to_string(got) + " left)");
}

std::optional<std::string_view> TFRecordReader::next() {
  uint64_t at = offset_;
  char header[12];
  if (!read_exact(header, 12, at, "header")) return std::nullopt;
  if (crc32c_mask(crc32c(header, 8)) != get_le(header + 8, 4))
    throw data_loss("TFRecord file '" + path_ + "': corrupt record at byte offset " +
                    std::to_string(at) + " (length CRC mismatch)");
  uint64_t length = get_le(header, 8);
  if (length > kMaxRecordBytes)
    throw data_loss("TFRecord file '" + path_ + "': record at byte offset " + std::to_string(at) +
                    " claims " + std::to_string(length) + " bytes");
  struct stat st {};
  if (length > kCheckedRecordBytes && ::fstat(fileno(file_), &st) == 0 && S_ISREG(st.st_mode)) {
    uint64_t left = uint64_t(st.st_size) > at + 12 ? uint64_t(st.st_size) - (at + 12) : 0;
    if (length + 4 > left)
      throw data_loss("TFRecord file '" + path_ + "': truncated record at byte offset " +
                      std::to_string(at) + " (data wants " + std::to_string(length + 4) +
                      " bytes, only " + std::to_string(left) + " left)");
  }
  buffer_.resize(size_t(length) + 4);
  read_exact(buffer_.data(), buffer_.size(), at, "data");
  if (crc32c_mask(crc32c(buffer_.data(), size_t(length))) != get_le(buffer_.data() + length, 4))
    throw data_loss("TFRecord file '" + path_ + "': corrupt record at byte offset " +
                    std::to_string(at) + " (data CRC mismatch)");
  offset_ = at + 16 + length;
  return std::string_view(buffer_.data(), size_t(length));
}

}  // namespace troupe::data
