// Synthetic ratings: the draw order `troupe data synthesize --kind ratings` has always used, so
// ratings files made before the in-memory source existed hold the same examples.
#include <map>
#include <random>

#include "core/data/synthetic_ratings.hpp"
#include "data_test_util.hpp"

using namespace troupe;
using namespace troupe::data;

namespace {

RatingsOptions small_ratings(uint64_t seed) {
  RatingsOptions o;
  o.num_examples = 500;
  o.num_users = 7;
  o.num_items = 5;
  o.rank = 3;
  o.seed = seed;
  return o;
}

}  // namespace

TEST(SyntheticRatings, FollowTheDocumentedDrawOrder) {
  // Factors first (users then items, uniform in [-1, 1]), then one (user, item) pair per example.
  const RatingsOptions o = small_ratings(11);
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<float> users(size_t(o.num_users * o.rank)), items(size_t(o.num_items * o.rank));
  for (auto& x : users) x = uniform(rng);
  for (auto& x : items) x = uniform(rng);
  auto ds = synthetic_ratings(o);
  EXPECT_EQ(ds.cardinality(), 500);
  auto it = ds.make_iterator();
  int64_t n = 0;
  while (auto e = it.next()) {
    const int64_t u = int64_t(rng() % uint64_t(o.num_users));
    const int64_t v = int64_t(rng() % uint64_t(o.num_items));
    float rating = 0;
    for (int64_t k = 0; k < o.rank; ++k)
      rating += users[size_t(u * o.rank + k)] * items[size_t(v * o.rank + k)];
    ASSERT_EQ((*e)[0].to_vector<int64_t>(), (std::vector<int64_t>{u, v})) << "example " << n;
    ASSERT_EQ((*e)[1].scalar<float>(), rating) << "example " << n;  // bitwise
    ++n;
  }
  EXPECT_EQ(n, 500);
}

TEST(SyntheticRatings, ArePairsOfIdsInRangeRatedConsistently) {
  auto it = synthetic_ratings(small_ratings(4)).make_iterator();
  std::map<std::pair<int64_t, int64_t>, float> seen;
  while (auto e = it.next()) {
    EXPECT_EQ((*e)[0].shape(), Shape({2}));
    EXPECT_EQ((*e)[1].dtype(), DType::float32);
    const auto ids = (*e)[0].to_vector<int64_t>();
    ASSERT_GE(ids[0], 0);
    ASSERT_LT(ids[0], 7);
    ASSERT_GE(ids[1], 0);
    ASSERT_LT(ids[1], 5);
    const float rating = (*e)[1].scalar<float>();
    EXPECT_LE(std::abs(rating), 3.f);  // rank 3 factors in [-1, 1]
    auto [where, fresh] = seen.emplace(std::make_pair(ids[0], ids[1]), rating);
    if (!fresh) EXPECT_EQ(where->second, rating);  // one hidden rating per pair
  }
  EXPECT_GT(seen.size(), 30u);  // most of the 35 pairs occur in 500 draws
}

TEST(SyntheticRatings, AnotherSeedGivesOtherRatings) {
  auto a = synthetic_ratings(small_ratings(1)).make_iterator();
  auto b = synthetic_ratings(small_ratings(2)).make_iterator();
  int differ = 0;
  for (int i = 0; i < 20; ++i)
    differ += a.next()->at(1).scalar<float>() != b.next()->at(1).scalar<float>();
  EXPECT_GT(differ, 15);
}

TEST(SyntheticRatings, BadOptionsNameTheOption) {
  RatingsOptions o = small_ratings(1);
  o.num_users = 0;
  EXPECT_ERROR_CONTAINS(synthetic_ratings(o), "synthetic_ratings: num_users must be >= 1, got 0");
  o = small_ratings(1);
  o.num_items = -2;
  EXPECT_ERROR_CONTAINS(synthetic_ratings(o), "synthetic_ratings: num_items must be >= 1, got -2");
  o = small_ratings(1);
  o.rank = 0;
  EXPECT_ERROR_CONTAINS(synthetic_ratings(o), "synthetic_ratings: rank must be >= 1, got 0");
  o = small_ratings(1);
  o.num_examples = -1;
  EXPECT_ERROR_CONTAINS(synthetic_ratings(o),
                        "synthetic_ratings: num_examples must be >= 0, got -1");
}
