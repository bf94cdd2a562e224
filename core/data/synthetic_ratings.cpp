#include "core/data/synthetic_ratings.hpp"

#include <random>

#include "core/data/node_helpers.hpp"

namespace troupe::data {
namespace {

void check_at_least(int64_t value, int64_t least, const char* what) {
  if (value < least)
    throw invalid_argument(std::string("synthetic_ratings: ") + what + " must be >= " +
                           std::to_string(least) + ", got " + std::to_string(value));
}

struct Rating {
  int64_t user, item;
  float rating;
};

// The generator `troupe data synthesize --kind ratings` has always used: changing the order of
// the draws would change every ratings file made with a given seed.
std::vector<Rating> make_ratings(const RatingsOptions& o) {
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<float> users(size_t(o.num_users * o.rank)), items(size_t(o.num_items * o.rank));
  for (auto& x : users) x = uniform(rng);
  for (auto& x : items) x = uniform(rng);
  std::vector<Rating> ratings(size_t(o.num_examples));
  for (auto& r : ratings) {
    r.user = int64_t(rng() % uint64_t(o.num_users));
    r.item = int64_t(rng() % uint64_t(o.num_items));
    r.rating = 0;
    for (int64_t k = 0; k < o.rank; ++k)
      r.rating += users[size_t(r.user * o.rank + k)] * items[size_t(r.item * o.rank + k)];
  }
  return ratings;
}

}  // namespace

Dataset synthetic_ratings(const RatingsOptions& o) {
  check_at_least(o.num_examples, 0, "num_examples");
  check_at_least(o.num_users, 1, "num_users");
  check_at_least(o.num_items, 1, "num_items");
  check_at_least(o.rank, 1, "rank");
  auto ratings = std::make_shared<const std::vector<Rating>>(make_ratings(o));
  auto at = [ratings](int64_t i) -> std::optional<Element> {
    const Rating& r = (*ratings)[size_t(i)];
    return Element{Tensor::from_vector<int64_t>({2}, {r.user, r.item}),
                   Tensor::from_scalar<float>(r.rating)};
  };
  ElementSpec spec{{DType::int64, {2}}, {DType::float32, {}}};
  return Dataset(
      std::make_shared<IndexedSourceNode>("synthetic_ratings", spec, o.num_examples, at));
}

}  // namespace troupe::data
