// Protobuf schemas: Tensor <-> TensorProto with validation; the other schemas round-trip.
#include <gtest/gtest.h>

#include "messages/proto/checkpoint.pb.h"
#include "messages/proto/cluster.pb.h"
#include "messages/proto/experiment.pb.h"
#include "messages/tensor_proto.hpp"

#include "tests/common/error_of.hpp"

using namespace troupe;

using troupe::testing::error_of;

TEST(TensorProto, RoundTripEveryDtype) {
  for (DType dtype : {DType::float32, DType::float64, DType::int32, DType::int64}) {
    auto t = Tensor::random_uniform({4, 3}, 11, -5, 5, dtype);
    auto back = parse_tensor_proto(serialize_tensor_proto(t));
    EXPECT_TRUE(back.bitwise_equal(t)) << dtype_name(dtype);
  }
}

TEST(TensorProto, DtypeNumbersMatchTensorFlow) {
  EXPECT_EQ(int(proto::DT_FLOAT), int(DType::float32));
  EXPECT_EQ(int(proto::DT_DOUBLE), int(DType::float64));
  EXPECT_EQ(int(proto::DT_INT32), int(DType::int32));
  EXPECT_EQ(int(proto::DT_INT64), int(DType::int64));
}

TEST(TensorProto, ContentSizeMismatchIsNamed) {
  auto p = to_proto(Tensor::zeros(DType::float32, {2, 3}));
  p.mutable_tensor_content()->resize(20);
  EXPECT_EQ(error_of([&] { from_proto(p); }),
            "TensorProto: tensor_content has 20 bytes but float32 shape needs 24");
}

TEST(TensorProto, BadDtypeNegativeDimAndOverflowAreNamed) {
  auto p = to_proto(Tensor::zeros(DType::float32, {2}));
  p.set_dtype(static_cast<proto::DataType>(5));
  EXPECT_EQ(error_of([&] { from_proto(p); }), "TensorProto: dtype value 5 is not a DType");
  p = to_proto(Tensor::zeros(DType::float32, {2}));
  p.mutable_shape()->set_dim(0, -2);
  EXPECT_EQ(error_of([&] { from_proto(p); }), "TensorProto: dimension 0 is negative (-2)");
  p.mutable_shape()->set_dim(0, int64_t(1) << 62);
  p.mutable_shape()->add_dim(int64_t(1) << 62);
  EXPECT_EQ(error_of([&] { from_proto(p); }), "TensorProto: shape overflows at dimension 0");
}

TEST(TensorProto, MalformedBytesAreRejected) {
  std::string garbage = "\xff\xff\xff\xff\x0f";
  EXPECT_EQ(error_of([&] { parse_tensor_proto(garbage); }),
            "TensorProto: 5 bytes do not parse as a TensorProto");
  auto good = serialize_tensor_proto(Tensor::zeros(DType::int32, {8}));
  EXPECT_NE(error_of([&] { parse_tensor_proto(good.substr(0, good.size() - 3)); }), "");
}

TEST(TensorProto, GpuAndUndefinedTensorsAreRefused) {
  EXPECT_EQ(error_of([&] { to_proto(Tensor{}); }), "to_proto: undefined tensor");
}

TEST(ClusterProto, TfConfigShapeRoundTrips) {
  proto::ClusterConfig c;
  auto& jobs = *c.mutable_cluster()->mutable_job();
  jobs["worker"].add_address("127.0.0.1:2222");
  jobs["worker"].add_address("127.0.0.1:2223");
  jobs["ps"].add_address("127.0.0.1:2224");
  c.mutable_task()->set_type("worker");
  c.mutable_task()->set_index(1);
  proto::ClusterConfig back;
  ASSERT_TRUE(back.ParseFromString(c.SerializeAsString()));
  EXPECT_EQ(back.cluster().job().at("worker").address(1), "127.0.0.1:2223");
  EXPECT_EQ(back.task().index(), 1);
}

TEST(CheckpointProto, ManifestRoundTrips) {
  proto::CheckpointManifest m;
  m.set_version(1);
  m.set_step(500);
  auto* e = m.add_entry();
  e->set_name("dense/kernel");
  e->set_dtype(proto::DT_FLOAT);
  e->add_shape(784);
  e->add_shape(10);
  e->set_file("data-0");
  e->set_offset(4096);
  e->set_length(784 * 10 * 4);
  e->set_crc32c(0xdeadbeef);
  proto::CheckpointManifest back;
  ASSERT_TRUE(back.ParseFromString(m.SerializeAsString()));
  EXPECT_EQ(back.entry(0).crc32c(), 0xdeadbeefu);
  EXPECT_EQ(back.entry(0).length(), 31360u);
  EXPECT_EQ(back.step(), 500);
}

TEST(ExperimentProto, NestedSpecsRoundTrip) {
  proto::Experiment x;
  x.set_name("mnist-mirrored");
  x.set_seed(42);
  x.mutable_strategy()->set_kind("mirrored");
  x.mutable_strategy()->add_devices("CPU:0");
  x.mutable_strategy()->mutable_cross_device_ops()->set_num_packs(2);
  x.mutable_optimizer()->set_kind("adam");
  x.mutable_optimizer()->set_beta2(0.999);
  x.mutable_train()->set_checkpoint_dir("/tmp/ckpt");
  proto::Experiment back;
  ASSERT_TRUE(back.ParseFromString(x.SerializeAsString()));
  EXPECT_EQ(back.strategy().cross_device_ops().num_packs(), 2);
  EXPECT_DOUBLE_EQ(back.optimizer().beta2(), 0.999);
  EXPECT_EQ(back.train().checkpoint_dir(), "/tmp/ckpt");
}
