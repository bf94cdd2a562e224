// gather_rows and scatter_add_rows: closed-form rows, duplicate indices, bounds errors.

#include "kernel_test_util.hpp"

namespace troupe {
namespace {

using testing::as_doubles;
using testing::KernelTest;

class GatherScatter : public KernelTest {};

TEST_F(GatherScatter, GatherRowsCopiesIndexedRows) {
  // params[r, c] = 10 r + c
  std::vector<float> values;
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 3; ++c) values.push_back(float(10 * r + c));
  Tensor params = Tensor::from_vector<float>({5, 3}, values);
  for (DType idt : {DType::int32, DType::int64}) {
    Tensor idx = idt == DType::int32 ? Tensor::from_vector<int32_t>({4}, {4, 0, 4, 2})
                                     : Tensor::from_vector<int64_t>({4}, {4, 0, 4, 2});
    Tensor rows = ops.gather_rows(params, idx);
    EXPECT_EQ(rows.shape(), (Shape{4, 3}));
    EXPECT_EQ(rows.to_vector<float>(),
              (std::vector<float>{40, 41, 42, 0, 1, 2, 40, 41, 42, 20, 21, 22}));
  }
}

TEST_F(GatherScatter, GatherRowsOfRank1AndRank3Tables) {
  Tensor vec = Tensor::from_vector<int64_t>({4}, {5, 6, 7, 8});
  Tensor idx = Tensor::from_vector<int32_t>({2}, {3, 1});
  EXPECT_EQ(ops.gather_rows(vec, idx).to_vector<int64_t>(), (std::vector<int64_t>{8, 6}));
  Tensor cube = Tensor::random_uniform({3, 2, 2}, 4, 0, 1, DType::float64);
  Tensor one = Tensor::from_vector<int32_t>({1}, {2});
  Tensor got = ops.gather_rows(cube, one);
  EXPECT_EQ(got.shape(), (Shape{1, 2, 2}));
  EXPECT_TRUE(got.bitwise_equal(cube.slice_rows(2, 3).clone()));
  Tensor none = Tensor::from_vector<int32_t>({0}, {});
  EXPECT_EQ(ops.gather_rows(cube, none).shape(), (Shape{0, 2, 2}));
}

TEST_F(GatherScatter, ScatterAddRowsAccumulatesDuplicates) {
  Tensor target = Tensor::zeros(DType::float64, {4, 2});
  Tensor idx = Tensor::from_vector<int64_t>({3}, {1, 3, 1});
  Tensor updates = Tensor::from_vector<double>({3, 2}, {1, 2, 10, 20, 100, 200});
  ops.scatter_add_rows(idx, updates, target);
  EXPECT_EQ(target.to_vector<double>(), (std::vector<double>{0, 0, 101, 202, 0, 0, 10, 20}));
}

TEST_F(GatherScatter, ScatterIsTheAdjointOfGather) {
  // <gather(P, idx), U> == <P, scatter_add(idx, U)> for random P, U: checks both ops at once.
  Tensor params = Tensor::random_uniform({6, 3}, 31, -1, 1, DType::float64);
  Tensor idx = Tensor::from_vector<int32_t>({5}, {5, 0, 5, 3, 0});
  Tensor u = Tensor::random_uniform({5, 3}, 32, -1, 1, DType::float64);
  auto g = as_doubles(ops.gather_rows(params, idx));
  Tensor s = Tensor::zeros(DType::float64, {6, 3});
  ops.scatter_add_rows(idx, u, s);
  auto vu = as_doubles(u), vp = as_doubles(params), vs = as_doubles(s);
  double lhs = 0, rhs = 0;
  for (size_t i = 0; i < g.size(); ++i) lhs += g[i] * vu[i];
  for (size_t i = 0; i < vp.size(); ++i) rhs += vp[i] * vs[i];
  EXPECT_NEAR(lhs, rhs, 1e-12);
}

TEST_F(GatherScatter, OutOfRangeIndicesAreNamed) {
  Tensor params(DType::float32, {5, 3});
  Tensor idx = Tensor::from_vector<int32_t>({3}, {0, 5, 1});
  EXPECT_TROUPE_ERROR(ops.gather_rows(params, idx), Code::out_of_range,
                      "gather_rows: index 5 at position 1 is outside [0, 5)");
  Tensor neg = Tensor::from_vector<int64_t>({1}, {-2});
  Tensor upd(DType::float32, {1, 3});
  EXPECT_TROUPE_ERROR(ops.scatter_add_rows(neg, upd, params), Code::out_of_range,
                      "scatter_add_rows: index -2 at position 0 is outside [0, 5)");
}

TEST_F(GatherScatter, ShapeAndDtypeErrors) {
  Tensor params(DType::float32, {5, 3});
  Tensor fidx(DType::float32, {2});
  EXPECT_TROUPE_ERROR(ops.gather_rows(params, fidx), Code::invalid_argument,
                      "gather_rows: indices float32[2] must be int32 or int64");
  Tensor idx = Tensor::from_vector<int32_t>({2}, {0, 1});
  Tensor out(DType::float32, {2, 4});
  EXPECT_TROUPE_ERROR(ops.gather_rows(params, idx, out), Code::invalid_argument,
                      "gather_rows: out float32[2, 4] must have shape [2, 3] for params "
                      "float32[5, 3] and indices int32[2]");
  Tensor upd(DType::float32, {3, 3});
  EXPECT_TROUPE_ERROR(ops.scatter_add_rows(idx, upd, params), Code::invalid_argument,
                      "scatter_add_rows: updates float32[3, 3] must have shape [2, 3]");
  Tensor scalar(DType::float32, {});
  EXPECT_TROUPE_ERROR(ops.gather_rows(scalar, idx), Code::invalid_argument,
                      "gather_rows: params float32[] must have rank >= 1");
  Tensor idx2d = Tensor::from_vector<int32_t>({1, 2}, {0, 1});
  EXPECT_TROUPE_ERROR(ops.gather_rows(params, idx2d), Code::invalid_argument,
                      "gather_rows: indices int32[1, 2] must have rank 1");
}

}  // namespace
}  // namespace troupe

namespace troupe {
namespace {

class ScatterFamily : public testing::KernelTest {};

TEST_F(ScatterFamily, SubAndUpdateWithDuplicatesInIndexOrder) {
  Tensor idx = Tensor::from_vector<int32_t>({3}, {2, 0, 2});
  Tensor updates = Tensor::from_vector<int64_t>({3, 2}, {1, 2, 10, 20, 100, 200});
  Tensor target = Tensor::from_vector<int64_t>({3, 2}, {5, 5, 5, 5, 5, 5});
  ops.scatter_sub_rows(idx, updates, target);
  EXPECT_EQ(target.to_vector<int64_t>(), (std::vector<int64_t>{-5, -15, 5, 5, -96, -197}));
  ops.scatter_update_rows(idx, updates, target);
  // Row 2 is written twice: the later update (position 2) wins.
  EXPECT_EQ(target.to_vector<int64_t>(), (std::vector<int64_t>{10, 20, 5, 5, 100, 200}));
  Tensor ints = Tensor::from_vector<int32_t>({3}, {1, 1, 1});
  Tensor ones = Tensor::from_vector<int32_t>({2}, {4, 5});
  Tensor one_idx = Tensor::from_vector<int64_t>({2}, {0, 2});
  ops.scatter_add_rows(one_idx, ones, ints);  // int32 scatter_add
  EXPECT_EQ(ints.to_vector<int32_t>(), (std::vector<int32_t>{5, 1, 6}));
}

TEST_F(ScatterFamily, ErrorsNameTheOp) {
  Tensor target(DType::float32, {2, 2});
  Tensor idx = Tensor::from_vector<int32_t>({1}, {2});
  Tensor upd(DType::float32, {1, 2});
  EXPECT_TROUPE_ERROR(ops.scatter_update_rows(idx, upd, target), Code::out_of_range,
                      "scatter_update_rows: index 2 at position 0 is outside [0, 2)");
  Tensor bad(DType::float32, {1, 3});
  EXPECT_TROUPE_ERROR(ops.scatter_sub_rows(idx, bad, target), Code::invalid_argument,
                      "scatter_sub_rows: updates float32[1, 3] must have shape [1, 2]");
}

}  // namespace
}  // namespace troupe

namespace troupe {
namespace {

class RowsEdgeErrors : public testing::KernelTest {};

TEST_F(RowsEdgeErrors, UndefinedAndScalarTablesAreNamed) {
  Tensor idx = Tensor::from_vector<int32_t>({1}, {0});
  EXPECT_TROUPE_ERROR(ops.gather_rows(Tensor(), idx), Code::invalid_argument,
                      "gather_rows: params and indices must be defined tensors");
  Tensor scalar(DType::float32, {}), upd(DType::float32, {1});
  EXPECT_TROUPE_ERROR(ops.scatter_add_rows(idx, upd, scalar), Code::invalid_argument,
                      "scatter_add_rows: target float32[] must have rank >= 1");
}

}  // namespace
}  // namespace troupe
