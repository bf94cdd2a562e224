// sum_n, reduce_sum and bias_add_grad against sequential references.

#include "kernel_test_util.hpp"

namespace troupe {
namespace {

using testing::as_doubles;
using testing::KernelTest;

class Reductions : public KernelTest {};

// sum_n must equal a plain left-to-right float sum bit for bit, for any input count and size.
TEST_F(Reductions, SumNMatchesSequentialSumBitwise) {
  for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 11}) {
    for (int64_t count : {0, 1, 7, 2048, 2049, 10001}) {
      std::vector<Tensor> inputs;
      std::vector<const void*> ptrs;
      for (int j = 0; j < n; ++j) {
        inputs.push_back(Tensor::random_uniform({count}, 100 + j, -1, 1));
        ptrs.push_back(inputs.back().raw_data());
      }
      Tensor out(DType::float32, {count});
      ops.sum_n(ptrs, out.raw_data(), DType::float32, count);
      const float* got = out.data<float>();
      for (int64_t i = 0; i < count; ++i) {
        float expected = inputs[0].data<float>()[i];
        for (int j = 1; j < n; ++j) expected += inputs[j].data<float>()[i];
        ASSERT_EQ(got[i], expected) << "n=" << n << " count=" << count << " i=" << i;
      }
    }
  }
}

TEST_F(Reductions, SumNOutputMayAliasAnyInput) {
  for (int alias : {0, 2, 4}) {
    std::vector<Tensor> inputs;
    for (int j = 0; j < 5; ++j)
      inputs.push_back(Tensor::random_uniform({3000}, 7 + j, -1, 1, DType::float64));
    std::vector<double> expected(3000, 0.0);
    for (int j = 0; j < 5; ++j)
      for (int i = 0; i < 3000; ++i) expected[i] += inputs[j].data<double>()[i];
    Tensor out = inputs[alias];  // same buffer
    ops.sum_n(inputs, out);
    EXPECT_EQ(as_doubles(out), expected) << "alias " << alias;
  }
}

TEST_F(Reductions, SumNIntegers) {
  Tensor a = Tensor::from_vector<int64_t>({3}, {1, 2, 3});
  Tensor b = Tensor::from_vector<int64_t>({3}, {10, 20, 30});
  Tensor c = Tensor::from_vector<int64_t>({3}, {100, 200, 300});
  Tensor out(DType::int64, {3});
  ops.sum_n({a, b, c}, out);
  EXPECT_EQ(out.to_vector<int64_t>(), (std::vector<int64_t>{111, 222, 333}));
  Tensor i = Tensor::from_vector<int32_t>({2}, {-4, 4});
  Tensor iout(DType::int32, {2});
  ops.sum_n({i, i}, iout);
  EXPECT_EQ(iout.to_vector<int32_t>(), (std::vector<int32_t>{-8, 8}));
}

TEST_F(Reductions, SumNWithNoInputsZeroesRawOutput) {
  std::vector<float> out(5, 3.0f);
  ops.sum_n({}, out.data(), DType::float32, 5);
  EXPECT_EQ(out, std::vector<float>(5, 0.0f));
}

TEST_F(Reductions, SumNErrors) {
  Tensor out(DType::float32, {3});
  EXPECT_TROUPE_ERROR(ops.sum_n(std::vector<Tensor>{}, out), Code::invalid_argument,
                      "sum_n: needs at least one input");
  Tensor wrong(DType::float32, {4});
  EXPECT_TROUPE_ERROR(ops.sum_n({out, wrong}, out), Code::invalid_argument,
                      "sum_n: inputs[1] float32[4] and out float32[3]");
  EXPECT_TROUPE_ERROR(ops.sum_n({nullptr}, out.raw_data(), DType::float32, 3),
                      Code::invalid_argument, "sum_n: input 0 is null");
  EXPECT_TROUPE_ERROR(ops.sum_n({out.raw_data()}, out.raw_data(), DType::float32, -1),
                      Code::invalid_argument, "sum_n: count -1 is negative");
  EXPECT_TROUPE_ERROR(ops.sum_n({out.raw_data()}, nullptr, DType::float32, 3),
                      Code::invalid_argument, "sum_n: out is null");
}

TEST_F(Reductions, ReduceSumAccumulatesInDouble) {
  // A float accumulator stalls at 2^24 when adding ones; 2^24 + 2 is exact in double and float.
  const int64_t n = (int64_t(1) << 24) + 2;
  Tensor ones = Tensor::filled<float>({n}, 1.0f);
  EXPECT_EQ(ops.reduce_sum(ones).scalar<float>(), 16777218.0f);
  Tensor ints = Tensor::from_vector<int32_t>({2, 2}, {1, 2, 3, -10});
  EXPECT_EQ(ops.reduce_sum(ints).scalar<int32_t>(), -4);
  Tensor empty(DType::float64, {0});
  EXPECT_EQ(ops.reduce_sum(empty).scalar<double>(), 0.0);
  Tensor bad_out(DType::float64, {2});
  EXPECT_TROUPE_ERROR(ops.reduce_sum(empty, bad_out), Code::invalid_argument,
                      "reduce_sum: out float64[2] must hold one element");
}

TEST_F(Reductions, BiasAddGradSumsLeadingDimensions) {
  Tensor g = Tensor::random_uniform({2, 3, 4}, 5, -1, 1, DType::float64);
  Tensor out(DType::float64, {4});
  ops.bias_add_grad(g, out);
  auto v = as_doubles(g);
  std::vector<double> expected(4, 0.0);
  for (size_t i = 0; i < v.size(); ++i) expected[i % 4] += v[i];
  testing::expect_all_near(expected, out, 1e-14);
  Tensor bad(DType::float64, {3});
  EXPECT_TROUPE_ERROR(
      ops.bias_add_grad(g, bad), Code::invalid_argument,
      "bias_add_grad: out float64[3] must have shape [4] for grad float64[2, 3, 4]");
}

}  // namespace
}  // namespace troupe
