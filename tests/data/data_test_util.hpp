#pragma once
// Helpers shared by the data tests.

#include <gtest/gtest.h>

#include "tests/common/error_of.hpp"

#include <string>
#include <vector>

#include "core/data/dataset.hpp"

namespace troupe::data::testing {

using troupe::testing::error_of;

// Pulls `batches` batches from both and expects the same dtype, shape and bytes.
inline void expect_same_batches(const Dataset& fast, const Dataset& reference, int batches,
                                const std::string& what) {
  auto a = fast.make_iterator();
  auto b = reference.make_iterator();
  for (int i = 0; i < batches; ++i) {
    auto x = a.next();
    auto y = b.next();
    ASSERT_EQ(x.has_value(), y.has_value()) << what << ": batch " << i;
    if (!x) return;
    ASSERT_EQ(x->size(), y->size()) << what;
    for (size_t c = 0; c < x->size(); ++c)
      EXPECT_TRUE((*x)[c].bitwise_equal((*y)[c]))
          << what << ": batch " << i << " component " << c << ": " << (*x)[c].description()
          << " vs " << (*y)[c].description();
  }
}

/// Values of component `c` of one element (int64).
inline std::vector<int64_t> values(const Element& e, size_t c = 0) {
  return e.at(c).to_vector<int64_t>();
}

/// Every element's component 0 as int64 vectors, until the end of the data.
inline std::vector<std::vector<int64_t>> drain(Iterator& it, size_t limit = 100000) {
  std::vector<std::vector<int64_t>> out;
  while (out.size() < limit) {
    auto e = it.next();
    if (!e) break;
    out.push_back(values(*e));
  }
  return out;
}

inline std::vector<std::vector<int64_t>> drain(const Dataset& ds, size_t limit = 100000) {
  auto it = ds.make_iterator();
  return drain(it, limit);
}

/// Pulls every element without looking at it; returns how many there were.
inline size_t count_all(const Dataset& ds) {
  auto it = ds.make_iterator();
  size_t n = 0;
  while (it.next()) ++n;
  return n;
}

/// Flattened drain for unbatched scalar pipelines.
inline std::vector<int64_t> drain_flat(const Dataset& ds) {
  std::vector<int64_t> out;
  for (auto& v : drain(ds)) out.insert(out.end(), v.begin(), v.end());
  return out;
}

/// A path in the test's own temporary directory.
inline std::string temp_path(const std::string& name) {
  auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return ::testing::TempDir() + "troupe_data_" + info->test_suite_name() + "_" + info->name() +
         "_" + name;
}

}  // namespace troupe::data::testing

#define EXPECT_ERROR_CONTAINS(stmt, text)                                                         \
  do {                                                                                            \
    std::string troupe_msg_ = ::troupe::data::testing::error_of([&] { stmt; });                   \
    EXPECT_NE(troupe_msg_.find(text), std::string::npos) << "error was: '" << troupe_msg_ << "'"; \
  } while (0)
