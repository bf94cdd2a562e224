// read_checkpoint / read_manifest / latest_checkpoint: everything is verified before anything
// is returned, so a caller never sees half a checkpoint.
#include <sys/stat.h>

#include <cstring>
#include <limits>

#include "core/crc32c.hpp"
#include "experiment/checkpoint/checkpoint.hpp"
#include "experiment/checkpoint/checkpoint_files.hpp"
#include "experiment/checkpoint/manifest_codec.hpp"

namespace troupe::checkpoint {
namespace {

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string describe(const proto::CheckpointEntry& entry, bool blob) {
  return std::string(blob ? "blob '" : "tensor '") + entry.name() + "'";
}

// Checks one entry's bytes inside its data file; returns a view of them.
std::string_view verify_entry(const proto::CheckpointEntry& entry, bool blob,
                              const std::string& data, const std::string& data_path) {
  if (!blob) {
    if (!is_valid_dtype(int(entry.dtype())))
      throw data_loss(data_path + ": " + describe(entry, blob) + " has unknown dtype " +
                      std::to_string(int(entry.dtype())));
    // The byte count of the shape, refused before it overflows (a wrapped product could match
    // a short length and leave a huge shape over a tiny buffer).
    uint64_t expected = dtype_size(DType(entry.dtype()));
    for (int64_t d : entry.shape()) {
      if (d < 0) throw data_loss(data_path + ": " + describe(entry, blob) + " has a negative dim");
      if (d != 0 && expected > uint64_t(std::numeric_limits<int64_t>::max()) / uint64_t(d))
        throw data_loss(data_path + ": " + describe(entry, blob) + " has a shape of more than " +
                        "2^63 bytes");
      expected *= uint64_t(d);
    }
    if (entry.length() != expected)
      throw data_loss(data_path + ": " + describe(entry, blob) + " records " +
                      std::to_string(entry.length()) + " bytes, its shape needs " +
                      std::to_string(expected));
  }
  uint64_t end = entry.offset() + entry.length();
  if (end < entry.offset() || end > data.size())
    throw data_loss(data_path + " is truncated: " + describe(entry, blob) + " needs bytes [" +
                    std::to_string(entry.offset()) + ", " + std::to_string(end) +
                    ") but the file has " + std::to_string(data.size()));
  std::string_view bytes(data.data() + entry.offset(), entry.length());
  uint32_t actual = crc32c(bytes);
  if (actual != entry.crc32c())
    throw data_loss(data_path + ": " + describe(entry, blob) + " fails its CRC32C check (stored " +
                    std::to_string(entry.crc32c()) + ", computed " + std::to_string(actual) + ")");
  return bytes;
}

}  // namespace

std::string resolve_checkpoint(const std::string& path) {
  if (is_directory(path)) {
    auto latest = latest_checkpoint(path);
    if (!latest) throw not_found("no checkpoint in directory " + path);
    return *latest;
  }
  for (const char* suffix : {".manifest", ".data"})
    if (ends_with(path, suffix)) return path.substr(0, path.size() - std::strlen(suffix));
  return path;
}

proto::CheckpointManifest read_manifest(const std::string& path) {
  std::string prefix = resolve_checkpoint(path);
  std::string file = prefix + ".manifest";
  auto bytes = read_whole_file(file);
  if (!bytes) throw not_found("checkpoint " + prefix + ": manifest " + file + " is missing");
  return decode_manifest(*bytes, file);
}

Checkpoint read_checkpoint(const std::string& path) {
  std::string prefix = resolve_checkpoint(path);
  proto::CheckpointManifest manifest = read_manifest(prefix);
  std::string dir = dir_name(prefix);
  std::map<std::string, std::string> files;  // data file name -> bytes, each read once
  auto data_of = [&](const proto::CheckpointEntry& entry, bool blob) -> const std::string& {
    const std::string& name = entry.file();
    if (name.empty() || name.find('/') != std::string::npos)
      throw data_loss("checkpoint manifest " + prefix + ".manifest: " + describe(entry, blob) +
                      " names a bad data file \"" + name + "\"");
    auto it = files.find(name);
    if (it != files.end()) return it->second;
    auto bytes = read_whole_file(dir + "/" + name);
    if (!bytes)
      throw not_found("checkpoint " + prefix + ": data file " + dir + "/" + name + " (holding " +
                      describe(entry, blob) + ") is missing");
    return files.emplace(name, std::move(*bytes)).first->second;
  };
  // Pass 1 verifies every entry; pass 2 builds the result only once all of them are good.
  for (const auto& entry : manifest.entry())
    verify_entry(entry, false, data_of(entry, false), dir + "/" + entry.file());
  for (const auto& entry : manifest.blob())
    verify_entry(entry, true, data_of(entry, true), dir + "/" + entry.file());
  Checkpoint out;
  out.step = manifest.step();
  for (const auto& entry : manifest.entry()) {
    const std::string& data = files.at(entry.file());
    Tensor t(DType(entry.dtype()),
             Shape(std::vector<int64_t>(entry.shape().begin(), entry.shape().end())));
    if (entry.length() > 0) std::memcpy(t.raw_data(), data.data() + entry.offset(), entry.length());
    out.tensors.emplace(entry.name(), std::move(t));
  }
  for (const auto& entry : manifest.blob())
    out.blobs.emplace(entry.name(), files.at(entry.file()).substr(entry.offset(), entry.length()));
  return out;
}

std::optional<std::string> latest_checkpoint(const std::string& dir) {
  auto pointer = read_whole_file(dir + "/" + kPointerFile);
  if (pointer) {
    std::string name = pointer->substr(0, pointer->find('\n'));
    if (!name.empty() && name.find('/') == std::string::npos &&
        read_whole_file(dir + "/" + name + ".manifest"))
      return dir + "/" + name;
  }
  // No (usable) pointer: a crash between manifest and pointer rename leaves a newer manifest.
  auto steps = manifest_steps(dir);
  if (steps.empty()) return std::nullopt;
  return checkpoint_prefix(dir, steps.back());
}

}  // namespace troupe::checkpoint
