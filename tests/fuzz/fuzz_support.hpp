#pragma once
// Helpers shared by the fuzz targets: a per-process scratch directory for decoders that only
// take a path, and the one rule every target enforces: a decoder may refuse bad bytes only with
// a troupe::Error (which names the problem); anything else escapes and is a finding.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace troupe::fuzz {

/// The input as text (a view of libFuzzer's buffer, valid for this call).
inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// A directory of this process's own (tmpfs when the machine has one), removed at exit.
inline const std::string& scratch_dir() {
  // Never destroyed: the atexit cleanup below runs after static destructors would have.
  static const std::string* dir = [] {
    std::filesystem::path base = std::filesystem::is_directory("/dev/shm")
                                     ? std::filesystem::path("/dev/shm")
                                     : std::filesystem::temp_directory_path();
    std::filesystem::path d = base / ("troupe-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    auto* path = new std::string(d.string());
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(scratch_dir(), ignored);
    });
    return path;
  }();
  return *dir;
}

/// Writes `bytes` to scratch_dir()/name (replacing it) and returns the path.
inline std::string write_scratch_file(const std::string& name, std::string_view bytes) {
  std::string path = scratch_dir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  out.close();
  if (!out) std::abort();  // the harness, not the decoder, failed
  return path;
}

/// Aborts (a finding) when a property the decoder promises does not hold.
inline void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz property violated: %s\n", what);
    std::abort();
  }
}

}  // namespace troupe::fuzz
