// Replays a fuzz target's saved inputs as a unit test: every file of corpus/<decoder>/ and of
// regressions/<decoder>/ goes through LLVMFuzzerTestOneInput, so an input that once crashed or
// hung a decoder keeps being checked by `make test` and `make sanitize` without clang.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> files_in(const std::string& kind) {
  fs::path dir = fs::path(TROUPE_SOURCE_DIR) / "tests/fuzz" / kind / TROUPE_FUZZ_DECODER;
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file()) out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Feeds each file as libFuzzer would: an exact-size heap copy, so ASan sees reads past the end.
void replay(const std::vector<fs::path>& files) {
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in) << "cannot read " << path;
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto copy = std::make_unique<uint8_t[]>(bytes.size());
    std::copy(bytes.begin(), bytes.end(), copy.get());
    EXPECT_EQ(LLVMFuzzerTestOneInput(copy.get(), bytes.size()), 0);
  }
}

TEST(FuzzReplay, SeedCorpus) {
  auto files = files_in("corpus");
  ASSERT_FALSE(files.empty()) << "no seed corpus under tests/fuzz/corpus/" TROUPE_FUZZ_DECODER;
  replay(files);
}

TEST(FuzzReplay, Regressions) {
  auto files = files_in("regressions");
  if (files.empty()) GTEST_SKIP() << "no regression inputs for " TROUPE_FUZZ_DECODER;
  replay(files);
}

}  // namespace
