// SharedMemoryAllReduce with outer products (dense kernel gradients as their factors lhs^T rhs):
// the result holds the inputs' sums, then each product summed over the ranks, bit for bit what
// each rank's whole product summed in rank order gives; with 2 ranks the terms go in whichever
// order the blocks come free (an early rank adds its own before the other arrives), with more in
// rank order. Disagreeing shapes, MEAN and a missing GEMM are refused by name; a NaN in a factor
// marks the result not finite. The GEMM here is a plain loop (the kernel layer is not linked).

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

#include "collective_test_support.hpp"
#include "core/collective/shared_memory_all_reduce.hpp"

namespace troupe {
namespace {

using namespace std::chrono_literals;

// Rows [begin, end) of lhs^T rhs, each element summed over k in order, plus beta * out.
void loop_product_rows(const float* lhs, const float* rhs, int64_t k, int64_t m, int64_t n,
                       int64_t begin, int64_t end, float beta, float* out) {
  for (int64_t i = begin; i < end; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t t = 0; t < k; ++t) acc += lhs[t * m + i] * rhs[t * n + j];
      out[i * n + j] = beta == 0.0f ? acc : acc + beta * out[i * n + j];
    }
}

Tensor random_matrix(int64_t rows, int64_t cols, uint32_t seed) {
  Tensor t(DType::float32, Shape{rows, cols});
  float* p = t.data<float>();
  for (int64_t i = 0; i < rows * cols; ++i) {
    seed = seed * 1664525u + 1013904223u;
    p[i] = float(seed >> 8) / 8388608.0f - 1.0f;
  }
  return t;
}

// What the values path gives: each rank's whole product, summed in rank order.
std::vector<float> expected_sum(const std::vector<OuterProduct>& terms) {
  const int64_t k = terms[0].lhs.shape()[0], m = terms[0].lhs.shape()[1];
  const int64_t n = terms[0].rhs.shape()[1];
  std::vector<float> sum(size_t(m * n)), part(sum.size());
  for (size_t r = 0; r < terms.size(); ++r) {
    loop_product_rows(terms[r].lhs.data<float>(), terms[r].rhs.data<float>(), k, m, n, 0, m, 0,
                      r == 0 ? sum.data() : part.data());
    if (r > 0)
      for (size_t i = 0; i < sum.size(); ++i) sum[i] = sum[i] + part[i];
  }
  return sum;
}

struct GroupRun {
  std::vector<Tensor> results;
  std::vector<std::string> errors;
};

// Rank r runs on its own thread after delays[r]; inputs[r] and products[r] are its part.
GroupRun run_group(SharedMemoryAllReduce& group, const std::vector<std::vector<Tensor>>& inputs,
                   const std::vector<std::vector<OuterProduct>>& products,
                   const SharedMemoryReduce& how, std::vector<std::chrono::milliseconds> delays) {
  const size_t n = products.size();
  GroupRun out{std::vector<Tensor>(n), std::vector<std::string>(n)};
  std::vector<std::thread> threads;
  for (size_t r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      std::this_thread::sleep_for(delays.at(r));
      try {
        out.results[r] = group.run(int(r), inputs[r], products[r], how, 5s);
      } catch (const Error& e) {
        out.errors[r] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  return out;
}

SharedMemoryReduce plain_sum() { return {&testing::add_loop, &testing::add_into_loop, false}; }

// Ranks' inputs: a bias-like vector of 7 and two products [m, n] over k rows each.
struct Fixture {
  std::vector<std::vector<Tensor>> inputs;
  std::vector<std::vector<OuterProduct>> products;
};

Fixture make_fixture(int ranks, int64_t k, int64_t m, int64_t n) {
  Fixture f;
  for (int r = 0; r < ranks; ++r) {
    f.inputs.push_back({testing::closed_form_tensor(DType::float32, r, 7)});
    f.products.push_back(
        {{random_matrix(k, m, 11 + r), random_matrix(k, n, 23 + r), loop_product_rows},
         {random_matrix(k, n, 31 + r), random_matrix(k, 5, 41 + r), loop_product_rows}});
  }
  return f;
}

void expect_exact_sums(const Fixture& f, const GroupRun& run, int64_t m, int64_t n) {
  const size_t ranks = f.products.size();
  for (size_t r = 0; r < ranks; ++r) {
    ASSERT_EQ(run.errors[r], "") << "rank " << r;
    ASSERT_EQ(run.results[r].num_elements(), 7 + m * n + n * 5);
    EXPECT_TRUE(run.results[r].shares_buffer_with(run.results[0]));
  }
  const float* got = run.results[0].data<float>();
  for (int64_t i = 0; i < 7; ++i)
    EXPECT_EQ(got[i], float(testing::closed_form_sum(int(ranks), i))) << "input element " << i;
  int64_t offset = 7;
  for (size_t p = 0; p < 2; ++p) {
    std::vector<OuterProduct> terms;
    for (auto& mine : f.products) terms.push_back(mine[p]);
    const std::vector<float> want = expected_sum(terms);
    EXPECT_EQ(std::memcmp(got + offset, want.data(), want.size() * sizeof(float)), 0)
        << "product " << p << " differs from the whole products summed in rank order";
    offset += int64_t(want.size());
  }
  EXPECT_EQ(run.results[0].buffer()->finiteness(), Finiteness::all_finite);
}

TEST(OuterProductAllReduce, TwoRanksMatchWholeProductsSummedBitForBit) {
  // 784 x 256 over 64 rows: 14 row blocks, the MLP's first kernel at a smaller batch.
  const int64_t k = 64, m = 784, n = 256;
  for (auto delays : {std::vector<std::chrono::milliseconds>{0ms, 0ms}, {0ms, 30ms}, {30ms, 0ms}}) {
    Fixture f = make_fixture(2, k, m, n);
    SharedMemoryAllReduce group(2, "test");
    expect_exact_sums(f, run_group(group, f.inputs, f.products, plain_sum(), delays), m, n);
  }
}

TEST(OuterProductAllReduce, MoreRanksAddTheirTermsInRankOrder) {
  const int64_t k = 9, m = 100, n = 48;
  for (int ranks : {1, 3, 4}) {
    Fixture f = make_fixture(ranks, k, m, n);
    SharedMemoryAllReduce group(ranks, "test");
    std::vector<std::chrono::milliseconds> delays(size_t(ranks), 0ms);
    delays.back() = 20ms;
    expect_exact_sums(f, run_group(group, f.inputs, f.products, plain_sum(), delays), m, n);
  }
}

TEST(OuterProductAllReduce, ProductsAloneAndEmptyInnerDimension) {
  for (int64_t k : {int64_t(0), int64_t(1)}) {
    std::vector<std::vector<Tensor>> inputs(2);
    std::vector<std::vector<OuterProduct>> products;
    for (int r = 0; r < 2; ++r)
      products.push_back(
          {{random_matrix(k, 40, 5 + r), random_matrix(k, 3, 7 + r), loop_product_rows}});
    SharedMemoryAllReduce group(2, "test");
    GroupRun run = run_group(group, inputs, products, plain_sum(), {0ms, 0ms});
    ASSERT_EQ(run.errors[0], "");
    ASSERT_EQ(run.results[1].num_elements(), 120);
    const std::vector<float> want = expected_sum({products[0][0], products[1][0]});
    EXPECT_EQ(std::memcmp(run.results[1].data<float>(), want.data(), 120 * sizeof(float)), 0);
  }
}

TEST(OuterProductAllReduce, NanInAFactorMarksTheResultNotFinite) {
  Fixture f = make_fixture(2, 16, 64, 32);
  f.products[1][0].rhs.data<float>()[3] = std::numeric_limits<float>::quiet_NaN();
  SharedMemoryAllReduce group(2, "test");
  GroupRun run = run_group(group, f.inputs, f.products, plain_sum(), {0ms, 0ms});
  ASSERT_EQ(run.errors[0], "");
  EXPECT_EQ(run.results[0].buffer()->finiteness(), Finiteness::not_all_finite);
}

TEST(OuterProductAllReduce, DisagreeingShapesAreRefusedNamingBoth) {
  Fixture f = make_fixture(2, 8, 32, 16);
  f.products[1][0].lhs = random_matrix(8, 33, 3);  // rank 1: [33, 16] instead of [32, 16]
  SharedMemoryAllReduce group(2, "test");
  GroupRun run = run_group(group, f.inputs, f.products, plain_sum(), {0ms, 20ms});
  EXPECT_NE(run.errors[1].find("[33, 16, 8]"), std::string::npos) << run.errors[1];
  EXPECT_NE(run.errors[1].find("[32, 16, 8]"), std::string::npos) << run.errors[1];
  EXPECT_NE(run.errors[0], "");  // the earlier rank learns of it instead of waiting
}

TEST(OuterProductAllReduce, MeanMissingGemmAndWrongDtypeAreRefused) {
  Fixture f = make_fixture(1, 4, 8, 8);
  SharedMemoryReduce mean = plain_sum();
  mean.mean = true;
  auto error_of = [&](const std::vector<Tensor>& inputs, const std::vector<OuterProduct>& products,
                      const SharedMemoryReduce& how) {
    SharedMemoryAllReduce group(1, "test");
    try {
      group.run(0, inputs, products, how, 1s);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_of(f.inputs[0], f.products[0], mean).find("summed, not averaged"),
            std::string::npos);
  auto no_gemm = f.products[0];
  no_gemm[0].rows = nullptr;
  EXPECT_NE(error_of(f.inputs[0], no_gemm, plain_sum()).find("no GEMM function"),
            std::string::npos);
  EXPECT_NE(
      error_of({testing::closed_form_tensor(DType::float64, 0, 3)}, f.products[0], plain_sum())
          .find("needs float32"),
      std::string::npos);
}

TEST(OuterProductAllReduce, BlockRowsCoverTheMlpShapes) {
  EXPECT_EQ(outer_product_block_rows(784, 256), 56);  // 14 blocks
  EXPECT_EQ(outer_product_block_rows(256, 10), 256);  // 0.6 MFLOP: one block
  EXPECT_EQ(outer_product_block_rows(5, 4096), 5);
  for (int64_t m : {1, 17, 1000})
    for (int64_t n : {1, 64, 5000}) {
      const int64_t rows = outer_product_block_rows(m, n);
      EXPECT_GE(rows, 1);
      EXPECT_LE(rows, m);
    }
}

}  // namespace
}  // namespace troupe
