// The caching GPU allocator's bookkeeping (kernels/gpu_block_cache.hpp), on the host: a released
// block is handed out again only after a whole-device synchronisation that began after its
// release completed, by exact rounded size, within the cache's capacity.
#include "kernels/gpu_block_cache.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace troupe {
namespace {

// Distinct fake addresses: the cache never dereferences its blocks.
void* block(uintptr_t i) { return reinterpret_cast<void*>(0x1000 * i); }

TEST(GpuBlockCache, SizesRoundUpToWholeGranulesAndZeroGetsOne) {
  EXPECT_EQ(GpuBlockCache::rounded(0), GpuBlockCache::kGranule);
  EXPECT_EQ(GpuBlockCache::rounded(1), GpuBlockCache::kGranule);
  EXPECT_EQ(GpuBlockCache::rounded(512), 512u);
  EXPECT_EQ(GpuBlockCache::rounded(513), 1024u);
}

TEST(GpuBlockCache, AReleasedBlockWaitsForASynchronisationThatBeganAfterIt) {
  GpuBlockCache cache(1 << 20);
  EXPECT_EQ(cache.take(1024), nullptr) << "an empty cache has nothing to hand out";
  const uint64_t early = cache.synchronizing();  // began before the release
  ASSERT_TRUE(cache.release(block(1), 1024));
  EXPECT_EQ(cache.take(1024), nullptr) << "queued work may still use the block";
  cache.synchronized(early);
  EXPECT_EQ(cache.take(1024), nullptr)
      << "a synchronisation that began before the release does not cover the work before it";
  const uint64_t later = cache.synchronizing();
  EXPECT_EQ(cache.take(1024), nullptr) << "begun is not completed";
  cache.synchronized(later);
  EXPECT_EQ(cache.take(1024), block(1));
  EXPECT_EQ(cache.take(1024), nullptr) << "a block is handed out once";
  EXPECT_EQ(cache.bytes_held(), 0u);
}

TEST(GpuBlockCache, BlocksAreHandedOutByExactSize) {
  GpuBlockCache cache(1 << 20);
  ASSERT_TRUE(cache.release(block(1), 1024));
  ASSERT_TRUE(cache.release(block(2), 2048));
  cache.synchronized(cache.synchronizing());
  EXPECT_EQ(cache.take(512), nullptr);
  EXPECT_EQ(cache.take(2048), block(2));
  EXPECT_EQ(cache.take(1024), block(1));
}

TEST(GpuBlockCache, PastItsCapacityTheCacheRefusesAndTheCallerFrees) {
  GpuBlockCache cache(4096);
  ASSERT_TRUE(cache.release(block(1), 2048));
  ASSERT_TRUE(cache.release(block(2), 2048));
  EXPECT_FALSE(cache.release(block(3), 512)) << "4096 bytes held already";
  cache.synchronized(cache.synchronizing());
  EXPECT_EQ(cache.bytes_held(), 4096u) << "free blocks count too";
  EXPECT_NE(cache.take(2048), nullptr);
  EXPECT_TRUE(cache.release(block(3), 512)) << "taking a block makes room";
}

TEST(GpuBlockCache, DrainReturnsTheFreeBlocksAndKeepsTheWaitingOnes) {
  GpuBlockCache cache(1 << 20);
  ASSERT_TRUE(cache.release(block(1), 1024));
  cache.synchronized(cache.synchronizing());
  ASSERT_TRUE(cache.release(block(2), 1024));  // after the synchronisation: still waiting
  auto drained = cache.drain_free();
  ASSERT_EQ(drained.size(), 1u);
  EXPECT_EQ(drained[0].first, block(1));
  EXPECT_EQ(drained[0].second, 1024u);
  EXPECT_EQ(cache.bytes_held(), 1024u);
  EXPECT_EQ(cache.take(1024), nullptr);
  cache.synchronized(cache.synchronizing());
  EXPECT_EQ(cache.take(1024), block(2));
}

TEST(GpuBlockCache, ThreadsReleasingAndTakingConcurrentlyNeverGetABlockTwice) {
  GpuBlockCache cache(1 << 30);
  constexpr int kThreads = 4, kBlocks = 2000;
  std::vector<std::thread> threads;
  std::vector<std::vector<void*>> taken(kThreads);
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kBlocks; ++i) {
        ASSERT_TRUE(cache.release(block(uintptr_t(1 + t * kBlocks + i)), 512));
        cache.synchronized(cache.synchronizing());
        if (void* b = cache.take(512)) taken[size_t(t)].push_back(b);
      }
    });
  for (auto& th : threads) th.join();
  std::vector<void*> all;
  for (auto& v : taken) all.insert(all.end(), v.begin(), v.end());
  cache.synchronized(cache.synchronizing());
  while (void* b = cache.take(512)) all.push_back(b);
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end())
      << "a block was handed out twice";
  EXPECT_EQ(all.size(), size_t(kThreads * kBlocks)) << "every released block comes back";
}

}  // namespace
}  // namespace troupe
