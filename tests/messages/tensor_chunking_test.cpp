// Large tensors travel as chunks that are views of the source and reassemble exactly.
#include <gtest/gtest.h>

#include <algorithm>

#include "messages/tensor_chunking.hpp"

#include "tests/common/error_of.hpp"

using namespace troupe;

using troupe::testing::error_of;

TEST(TensorChunking, ChunksAreViewsAndReassembleInAnyOrder) {
  auto t = Tensor::random_normal({10, 7}, 5);  // 280 bytes
  auto chunks = split_into_chunks(t, 9, 64);   // 16 floats per chunk -> 5 chunks
  ASSERT_EQ(chunks.size(), 5u);
  for (auto& c : chunks) EXPECT_TRUE(c.values.shares_buffer_with(t));
  std::reverse(chunks.begin(), chunks.end());
  ChunkAssembler a;
  for (size_t i = 0; i < chunks.size(); ++i) EXPECT_EQ(a.add(chunks[i]), i + 1 == chunks.size());
  EXPECT_TRUE(a.take().bitwise_equal(t));
}

TEST(TensorChunking, EmptyTensorIsOneEmptyChunk) {
  auto t = Tensor::zeros(DType::int32, {0, 3});
  auto chunks = split_into_chunks(t, 1);
  ASSERT_EQ(chunks.size(), 1u);
  ChunkAssembler a;
  EXPECT_TRUE(a.add(chunks[0]));
  EXPECT_EQ(a.take().shape(), Shape({0, 3}));
}

TEST(TensorChunking, DuplicateAndForeignChunksAreNamed) {
  auto t = Tensor::zeros(DType::float32, {8});
  auto chunks = split_into_chunks(t, 3, 8);
  ChunkAssembler a;
  a.add(chunks[0]);
  EXPECT_EQ(error_of([&] { a.add(chunks[0]); }), "chunk 0 arrived twice");
  auto foreign = chunks[1];
  foreign.transfer_id = 4;
  EXPECT_EQ(error_of([&] { a.add(foreign); }), "chunk of transfer 4 mixed into transfer 3");
  auto outside = chunks[1];
  outside.element_offset = 7;
  EXPECT_EQ(error_of([&] { a.add(outside); }), "chunk 1 range [7, +2) lies outside 8 elements");
  EXPECT_EQ(error_of([&] { a.take(); }), "ChunkAssembler: 1 of 4 chunks arrived");
}

// Found by fuzz_tensor_wire: one chunk declaring a 4 GiB shape made the assembler allocate it.
// Now nothing is allocated until the chunks that arrived tile the declared shape.
TEST(TensorChunking, DeclaredShapeAllocatesNothingUntilChunksTileIt) {
  tensor_chunk_msg last;
  last.transfer_id = 1;
  last.index = 1;
  last.count = 2;
  last.shape = {int64_t(1) << 40};
  last.element_offset = (int64_t(1) << 40) - 1;
  last.values = Tensor::zeros(DType::float32, {1});
  ChunkAssembler a;
  EXPECT_FALSE(a.add(last));
  EXPECT_EQ(error_of([&] { a.take(); }), "ChunkAssembler: 1 of 2 chunks arrived");
  tensor_chunk_msg first = last;
  first.index = 0;
  first.element_offset = 0;
  EXPECT_EQ(error_of([&] { a.add(first); }),
            "chunk 1 starts at element 1099511627775, expected 1 (the chunks leave a gap or "
            "overlap)");
}

TEST(TensorChunking, OverflowingDeclaredShapeIsNamed) {
  tensor_chunk_msg c;
  c.count = 1;
  c.shape = {int64_t(1) << 62, 8};
  c.values = Tensor::zeros(DType::float32, {1});
  ChunkAssembler a;
  EXPECT_EQ(error_of([&] { a.add(c); }),
            "chunk 0 declares shape [4611686018427387904, 8], which is negative or overflows");
}

TEST(TensorChunking, OverlappingChunksAreRefused) {
  auto chunks = split_into_chunks(Tensor::zeros(DType::float32, {4}), 2, 8);
  chunks[1].element_offset = 1;
  ChunkAssembler a;
  a.add(chunks[0]);
  EXPECT_EQ(error_of([&] { a.add(chunks[1]); }),
            "chunk 1 starts at element 1, expected 2 (the chunks leave a gap or overlap)");
}
