// Checkpoint manifests that lie about their data: each is refused by name before anything loads.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/crc32c.hpp"
#include "experiment/checkpoint/checkpoint.hpp"

namespace fs = std::filesystem;
using troupe::Code;
using troupe::Error;
using namespace troupe::checkpoint;

namespace {

class ManifestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() /
            ("troupe_manifest_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
    prefix_ = write_checkpoint(dir_, 9, {{"w", troupe::Tensor::random_normal({3, 2}, 5)}},
                               {{"it", "abc"}});
    manifest_ = read_manifest(prefix_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Rewrites the manifest (with a valid CRC trailer, so only the edited content is wrong).
  void rewrite() {
    std::string bytes;
    manifest_.SerializeToString(&bytes);
    uint32_t crc = troupe::crc32c_mask(troupe::crc32c(bytes));
    for (int i = 0; i < 4; ++i) bytes.push_back(char((crc >> (8 * i)) & 0xff));
    std::ofstream(prefix_ + ".manifest", std::ios::binary | std::ios::trunc) << bytes;
  }

  std::string error(Code code) {
    try {
      read_checkpoint(prefix_);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      return e.what();
    }
    ADD_FAILURE() << "read_checkpoint succeeded";
    return "";
  }

  std::string dir_, prefix_;
  troupe::proto::CheckpointManifest manifest_;
};

}  // namespace

TEST_F(ManifestTest, LengthThatDisagreesWithTheShape) {
  manifest_.mutable_entry(0)->set_length(20);
  rewrite();
  EXPECT_NE(error(Code::data_loss).find("tensor 'w' records 20 bytes, its shape needs 24"),
            std::string::npos);
}

// A shape whose byte count overflows (2^62 x 4 floats wrapped to 0) matched a zero length and
// built a tensor of that shape over an empty buffer. Regression input:
// tests/fuzz/regressions/checkpoint/shape-bytes-overflow-to-zero.
TEST_F(ManifestTest, ShapeWhoseByteCountOverflows) {
  auto* entry = manifest_.mutable_entry(0);
  entry->clear_shape();
  entry->add_shape(int64_t(1) << 62);
  entry->add_shape(4);
  entry->set_length(0);
  rewrite();
  EXPECT_NE(error(Code::data_loss).find("tensor 'w' has a shape of more than 2^63 bytes"),
            std::string::npos);
}

TEST_F(ManifestTest, DataFileOutsideTheDirectory) {
  manifest_.mutable_entry(0)->set_file("../elsewhere.data");
  rewrite();
  EXPECT_NE(error(Code::data_loss).find("tensor 'w' names a bad data file \"../elsewhere.data\""),
            std::string::npos);
}

TEST_F(ManifestTest, UnknownDtype) {
  manifest_.mutable_entry(0)->set_dtype(troupe::proto::DataType(7));
  rewrite();
  EXPECT_NE(error(Code::data_loss).find("tensor 'w' has unknown dtype 7"), std::string::npos);
}

TEST_F(ManifestTest, NewerVersionIsRefused) {
  manifest_.set_version(2);
  rewrite();
  EXPECT_NE(error(Code::failed_precondition).find("has version 2, this build reads 1"),
            std::string::npos);
}

TEST_F(ManifestTest, BlobCrcMismatchNamesTheBlob) {
  manifest_.mutable_blob(0)->set_crc32c(manifest_.blob(0).crc32c() ^ 1);
  rewrite();
  EXPECT_NE(error(Code::data_loss).find("blob 'it' fails its CRC32C check"), std::string::npos);
}

TEST_F(ManifestTest, TornManifestIsTruncated) {
  std::ofstream(prefix_ + ".manifest", std::ios::binary | std::ios::trunc) << "ab";
  EXPECT_NE(error(Code::data_loss).find("ckpt-9.manifest is truncated"), std::string::npos);
}

TEST_F(ManifestTest, ValidRewriteStillReads) {
  rewrite();
  auto c = read_checkpoint(prefix_);
  EXPECT_EQ(c.step, 9);
  EXPECT_EQ(c.blobs.at("it"), "abc");
}
