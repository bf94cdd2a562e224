// Checkpoint files (experiment/checkpoint): the manifest and the data file of one checkpoint,
// read and verified by read_checkpoint as `troupe run --resume` and `troupe inspect` do.
// Input: byte 0 (bit 0 set: the harness appends the manifest's CRC32C trailer, so the fuzzer
// reaches the proto and entry checks), a 2-byte little-endian manifest length, the manifest,
// then the data file ckpt-1.data. Refusals must be troupe::Errors; an accepted checkpoint's
// tensors must be exactly what the manifest describes.
#include <filesystem>
#include <set>

#include <google/protobuf/stubs/logging.h>
#include "core/crc32c.hpp"

#include "core/status.hpp"
#include "experiment/checkpoint/checkpoint.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace troupe;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // protobuf logs every invalid UTF-8 string field it parses; the decoder reports the failure.
  google::protobuf::SetLogHandler(
      [](google::protobuf::LogLevel, const char*, int, const std::string&) {});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  bool add_crc = data[0] & 1;
  size_t manifest_size = std::min<size_t>(size - 3, size_t(data[1]) | size_t(data[2]) << 8);
  std::string manifest(reinterpret_cast<const char*>(data + 3), manifest_size);
  std::string_view rest = fuzz::as_text(data + 3 + manifest_size, size - 3 - manifest_size);
  if (add_crc) {
    uint32_t crc = crc32c_mask(crc32c(manifest.data(), manifest.size()));
    for (int i = 0; i < 4; ++i) manifest.push_back(char(crc >> (8 * i)));
  }
  static const std::string dir = fuzz::scratch_dir() + "/ckpt";
  std::filesystem::create_directories(dir);
  fuzz::write_scratch_file("ckpt/ckpt-1.manifest", manifest);
  fuzz::write_scratch_file("ckpt/ckpt-1.data", rest);
  try {
    checkpoint::Checkpoint ckpt = checkpoint::read_checkpoint(dir + "/ckpt-1");
    proto::CheckpointManifest m = checkpoint::read_manifest(dir + "/ckpt-1");
    fuzz::require(ckpt.step == m.step(), "the step is the manifest's");
    std::set<std::string> named;
    for (const auto& entry : m.entry()) {
      auto it = ckpt.tensors.find(entry.name());
      fuzz::require(it != ckpt.tensors.end(), "each entry becomes a tensor");
      if (named.insert(entry.name()).second)  // the first entry of a name is the one kept
        fuzz::require(uint64_t(it->second.byte_size()) == entry.length(),
                      "a tensor holds exactly its entry's bytes");
    }
  } catch (const Error&) {
  }
  return 0;
}
