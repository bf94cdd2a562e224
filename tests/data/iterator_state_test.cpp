// save()/restore() of iterator positions: a restored iterator continues exactly as an
// uninterrupted one would.
#include <fstream>

#include "core/data/file_sources.hpp"
#include "core/data/iterator_state.hpp"
#include "core/data/rebatch.hpp"
#include "data_test_util.hpp"

using namespace troupe;
using namespace troupe::data;
using namespace troupe::data::testing;

namespace {
// Pulls `before` elements, saves, and checks that a fresh iterator restored from the bytes yields
// what the original yields next, to the end.
void expect_resumes_exactly(const Dataset& ds, size_t before) {
  auto it = ds.make_iterator();
  for (size_t i = 0; i < before; ++i) ASSERT_TRUE(it.next()) << "pipeline ended early";
  std::string state = it.save();
  auto resumed = ds.make_iterator();
  resumed.restore(state);
  auto want = drain(it), got = drain(resumed);
  EXPECT_EQ(got, want);
  EXPECT_FALSE(want.empty());
}
}  // namespace

TEST(IteratorState, MidEpochWithShuffleBatchRepeat) {
  auto ds = Dataset::range(0, 37).shuffle(8, 1234).batch(5).repeat(3).prefetch(2);
  for (size_t before : {0u, 1u, 3u, 8u, 10u, 17u}) expect_resumes_exactly(ds, before);
}

TEST(IteratorState, RepeatOutsideShuffleInsideAcrossEpochBoundary) {
  auto ds = Dataset::range(0, 10).shuffle(10, 7).repeat().take(45);
  expect_resumes_exactly(ds, 10);  // exactly at an epoch boundary
  expect_resumes_exactly(ds, 23);  // in the third epoch, whose shuffle order differs
}

TEST(IteratorState, RebatchMidInputBatch) {
  auto ds = rebatch_for_worker(Dataset::range(0, 40).shuffle(6, 2).batch(7), 1, 3, 0);
  expect_resumes_exactly(ds, 4);
  expect_resumes_exactly(Dataset::range(0, 23).batch(5).legacy_rebatch(3), 5);
}

TEST(IteratorState, MapFilterSkipShardGenerator) {
  auto gen = Dataset::from_generator(
      [](int64_t i) -> std::optional<Element> {
        if (i >= 50) return std::nullopt;
        return Element{Tensor::from_scalar<int64_t>(i)};
      },
      {{DType::int64, {}}});
  auto ds = gen.filter([](const Element& e) { return e[0].scalar<int64_t>() % 3 != 0; })
                .map([](const Element& e) { return e; })
                .skip(2)
                .shard(2, 1);
  expect_resumes_exactly(ds, 5);
}

TEST(IteratorState, StateIsPortableAcrossIdenticalPipelines) {
  auto build = [] { return Dataset::range(0, 30).shuffle(5, 9).batch(4); };
  auto it = build().make_iterator();
  it.next();
  auto other = build().make_iterator();
  other.restore(it.save());
  EXPECT_EQ(drain(other), drain(it));
}

TEST(IteratorState, CorruptBytesAreRejectedAndIteratorIsUnchanged) {
  auto ds = Dataset::range(0, 20).shuffle(4, 1).batch(3);
  auto it = ds.make_iterator();
  it.next();
  std::string state = it.save();
  auto fresh = ds.make_iterator();
  std::string flipped = state;
  flipped[flipped.size() / 2] ^= 0x20;
  EXPECT_ERROR_CONTAINS(fresh.restore(flipped), "iterator state: checksum mismatch");
  EXPECT_ERROR_CONTAINS(fresh.restore(state.substr(0, state.size() - 1)), "iterator state:");
  EXPECT_ERROR_CONTAINS(fresh.restore("garbage"), "iterator state: bad magic");
  // The failed restores left `fresh` at the start.
  EXPECT_EQ(values(*fresh.next()).size(), 3u);
}

TEST(IteratorState, StateFromADifferentPipelineIsRejected) {
  auto a = Dataset::range(0, 20).batch(3).make_iterator();
  auto b = Dataset::range(0, 20).shuffle(3, 1).make_iterator();
  EXPECT_ERROR_CONTAINS(b.restore(a.save()), "expected stage 'shuffle', found 'batch'");
}

TEST(IteratorState, FileSourcesResumeAtByteOffset) {
  auto path = temp_path("rows.csv");
  {
    std::ofstream f(path);
    f << "x,y\n";
    for (int i = 0; i < 12; ++i) f << i << "," << i * 0.5 << "\n";
  }
  auto ds = csv_dataset({path, path}, {{DType::int64, DType::float32}, true}).batch(5);
  expect_resumes_exactly(ds, 2);
}

// Found by fuzz_iterator_state: a shuffle or rebatch buffer's tensor whose dims are each small
// but whose product is gigabytes (or overflows int64) was allocated before its bytes were read.
TEST(IteratorState, TensorShapeBeyondTheStateIsRefusedBeforeAllocating) {
  StateWriter big;
  big.u64(uint64_t(DType::float32));
  big.u64(2);
  big.i64(200);
  big.i64(200);
  big.str(std::string(200, 'x'));
  StateReader r(big.bytes());
  EXPECT_ERROR_CONTAINS(r.tensor(),
                        "iterator state: tensor of 40000 float32 elements needs more than the 208 "
                        "bytes left");
  StateWriter huge;
  huge.u64(uint64_t(DType::int64));
  huge.u64(8);
  for (int i = 0; i < 8; ++i) huge.i64(300);
  huge.str(std::string(300, 'x'));
  StateReader h(huge.bytes());
  EXPECT_ERROR_CONTAINS(h.tensor(), "iterator state: tensor shape overflows int64 at dimension 7");
}
