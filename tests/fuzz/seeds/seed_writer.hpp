#pragma once
// What the seed programs share: each writes files under <root>/<decoder>/ with the project's own
// writers (root is argv[1]).

#include <filesystem>
#include <fstream>
#include <string>

namespace troupe::fuzz {

/// The corpus root the program was given.
inline std::string& seed_root() {
  static std::string root;
  return root;
}

/// Writes `bytes` as <root>/<decoder>/<name>.
inline void seed(const std::string& decoder, const std::string& name, const std::string& bytes) {
  std::filesystem::create_directories(seed_root() + "/" + decoder);
  std::ofstream(seed_root() + "/" + decoder + "/" + name, std::ios::binary) << bytes;
}

}  // namespace troupe::fuzz
