// The first-epoch cache of synthetic sources: rows kept once (RowCache::store/read), every row
// computed at once on several threads (materialize), and batches of consecutive rows handed out
// as views of the cache's memory, which must be the bytes the copying paths give and must never
// be changed by a consumer that writes into its batch.
#include <atomic>
#include <stdexcept>
#include <thread>

#include "core/data/row_cache.hpp"
#include "core/data/synthetic.hpp"
#include "data_test_util.hpp"

using namespace troupe;
using namespace troupe::data;
using namespace troupe::data::testing;

namespace {

ClassificationOptions cached_options(int64_t examples, int64_t features) {
  ClassificationOptions o;
  o.num_examples = examples;
  o.num_features = features;
  o.num_classes = 10;
  o.seed = 42;
  o.cache_bytes = int64_t(1) << 30;
  return o;
}

// The same examples with no cache: batches filled row by row, the reference bytes.
Dataset uncached(ClassificationOptions o) {
  o.cache_bytes = 0;
  return synthetic_classification(o);
}

const void* data_of(const Tensor& t) { return static_cast<const void*>(t.raw_data()); }

}  // namespace

TEST(RowCache, KeepsARowOnceAndCopiesItBack) {
  RowCache cache(4, {8, 4});
  int64_t a = 0x0102030405060708;
  int32_t b = 77;
  int64_t out_a = 0;
  int32_t out_b = 0;
  RowDestination out{&out_a, &out_b};
  EXPECT_FALSE(cache.read(2, out));
  cache.store(2, {&a, &b});
  int64_t other = 5;
  cache.store(2, {&other, &b});  // already kept: ignored
  ASSERT_TRUE(cache.read(2, out));
  EXPECT_EQ(out_a, a);
  EXPECT_EQ(out_b, 77);
  EXPECT_FALSE(cache.read(3, out));
  EXPECT_FALSE(cache.read(4, out));  // past the end
  EXPECT_EQ(RowCache::bytes_needed(4, {8, 4}), 48u);
  EXPECT_EQ(error_of([] { RowCache(-1, {4}); }), "RowCache: negative row count -1");
}

TEST(RowCache, TwoThreadsStoringTheSameRowsLeaveThemIntact) {
  constexpr int64_t kRows = 2000;
  RowCache cache(kRows, {sizeof(int64_t)});
  auto fill = [&cache] {
    for (int64_t i = 0; i < kRows; ++i) {
      int64_t v = i * 3 + 1;
      cache.store(i, {&v});
    }
  };
  std::thread t(fill);
  fill();
  t.join();
  for (int64_t i = 0; i < kRows; ++i) {
    int64_t v = -1;
    ASSERT_TRUE(cache.read(i, {&v}));
    EXPECT_EQ(v, i * 3 + 1);
  }
}

TEST(RowCache, MaterializeComputesEveryRowOnceOnSeveralThreadsAndViewsThem) {
  constexpr int64_t kRows = 1001;
  auto cache = std::make_shared<RowCache>(kRows, std::vector<size_t>{3 * sizeof(float), 8});
  std::atomic<int64_t> calls{0};
  auto compute = [&calls](int64_t i, const RowDestination& dst) {
    ++calls;
    for (int j = 0; j < 3; ++j) static_cast<float*>(dst[0])[j] = float(i * 10 + j);
    *static_cast<int64_t*>(dst[1]) = -i;
  };
  const ElementSpec spec{{DType::float32, {3}}, {DType::int64, {}}};
  EXPECT_FALSE(cache->view_rows(0, 4, spec)) << "nothing kept yet";
  int64_t one = 7;
  float row[3] = {1, 2, 3};
  cache->store(5, {row, &one});  // kept before: materialize leaves it as it is
  cache->materialize(compute, 3);
  cache->materialize(compute, 3);  // once
  EXPECT_EQ(calls.load(), kRows - 1);
  auto batch = cache->view_rows(998, 3, spec);
  ASSERT_TRUE(batch);
  EXPECT_EQ((*batch)[0].shape(), (Shape{3, 3}));
  EXPECT_EQ((*batch)[0].to_vector<float>(),
            (std::vector<float>{9980, 9981, 9982, 9990, 9991, 9992, 10000, 10001, 10002}));
  EXPECT_EQ((*batch)[1].to_vector<int64_t>(), (std::vector<int64_t>{-998, -999, -1000}));
  EXPECT_EQ(cache->view_rows(4, 2, spec)->at(1).to_vector<int64_t>(),
            (std::vector<int64_t>{-4, 7}));
  EXPECT_FALSE(cache->view_rows(999, 3, spec)) << "past the end";
  EXPECT_FALSE(cache->view_rows(-1, 2, spec));
  EXPECT_FALSE(cache->view_rows(0, 2, {{DType::int64, {}}})) << "another spec";
}

TEST(RowCache, AFailedMaterializeKeepsWhatItFinishedAndALaterOneCompletesIt) {
  auto cache = std::make_shared<RowCache>(100, std::vector<size_t>{sizeof(int64_t)});
  bool fail = true;
  auto compute = [&fail](int64_t i, const RowDestination& dst) {
    if (fail && i == 60) throw std::runtime_error("row 60 failed");
    *static_cast<int64_t*>(dst[0]) = i;
  };
  const ElementSpec spec{{DType::int64, {}}};
  EXPECT_THROW(cache->materialize(compute, 2), std::runtime_error);
  EXPECT_TRUE(cache->view_rows(0, 50, spec)) << "the first thread's range finished";
  EXPECT_FALSE(cache->view_rows(55, 10, spec)) << "row 60 is not kept";
  fail = false;
  cache->materialize(compute, 2);
  EXPECT_EQ(cache->view_rows(55, 10, spec)->at(0).to_vector<int64_t>()[5], 60);
}

TEST(RowCacheViews, CachedBatchesViewTheSameMemoryEveryEpochWithTheUncachedBytes) {
  // 100 examples, batches of 16 with drop_remainder: 6 views per epoch, then a batch across the
  // epoch's end that is filled (copied) from two epochs' rows.
  auto o = cached_options(100, 784);
  auto ds = synthetic_classification(o).repeat().batch(16, true);
  auto it = ds.make_iterator();
  auto ref = uncached(o).repeat().batch(16, true).make_iterator();
  std::vector<const void*> first_epoch;
  for (int b = 0; b < 40; ++b) {
    auto got = it.next();
    auto want = ref.next();
    ASSERT_TRUE(got && want);
    for (size_t c = 0; c < 2; ++c)
      ASSERT_TRUE((*got)[c].bitwise_equal((*want)[c])) << "batch " << b;
    if (b < 6) first_epoch.push_back(data_of((*got)[0]));
  }
  // Epoch 2 starts at row 12 (100 = 6 x 16 + 4): its batches are offset; epoch 5 (rows 400..)
  // starts again at row 0, so batch 25 (rows 400-415) views exactly what batch 0 viewed.
  auto again = ds.make_iterator();
  for (int b = 0; b < 25; ++b) again.next();
  EXPECT_EQ(data_of(again.next()->at(0)), first_epoch[0]) << "a view, not a copy";
}

TEST(RowCacheViews, WritingIntoAViewedBatchCopiesItAndLeavesTheCacheIntact) {
  auto o = cached_options(32, 8);
  auto ds = synthetic_classification(o).repeat().batch(32, true);
  auto it = ds.make_iterator();
  Tensor batch = it.next()->at(0);
  const Tensor before = batch.clone();
  const void* cache_memory = data_of(batch);
  batch.data<float>()[0] = 1e9f;  // copy-on-write: the batch gets its own bytes
  EXPECT_NE(data_of(batch), cache_memory);
  auto next_epoch = it.next()->at(0);
  EXPECT_EQ(data_of(next_epoch), cache_memory);
  EXPECT_TRUE(next_epoch.bitwise_equal(before));
}

TEST(RowCacheViews, ShardedShuffledAndTakenPipelinesGiveTheUncachedBytes) {
  auto o = cached_options(90, 5);
  auto cached = synthetic_classification(o);
  auto plain = uncached(o);

  expect_same_batches(cached.shard(3, 1).repeat().batch(8, true),
                      plain.shard(3, 1).repeat().batch(8, true), 12, "shard");
  expect_same_batches(cached.shuffle(50, 7).repeat().batch(8, true),
                      plain.shuffle(50, 7).repeat().batch(8, true), 12, "shuffle");
  expect_same_batches(cached.take(20).repeat().batch(8), plain.take(20).repeat().batch(8), 8,
                      "take 20");
  expect_same_batches(cached.repeat().take(200).batch(16), plain.repeat().take(200).batch(16), 14,
                      "take 200");
}

TEST(RowCacheViews, AResumedIteratorContinuesWithTheSameViews) {
  auto o = cached_options(64, 6);
  auto ds = synthetic_classification(o).repeat().batch(16, true);
  auto it = ds.make_iterator();
  for (int b = 0; b < 5; ++b) it.next();
  const std::string state = it.save();
  auto want = it.next();
  auto resumed = ds.make_iterator();
  resumed.restore(state);
  auto got = resumed.next();
  ASSERT_TRUE(want && got);
  EXPECT_EQ(data_of(got->at(0)), data_of(want->at(0)));
  EXPECT_TRUE(got->at(1).bitwise_equal(want->at(1)));
}
