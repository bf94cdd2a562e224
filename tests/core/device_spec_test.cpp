// DeviceSpec parsing, canonicalization (strategy-and-input T4, mirrored T6), the single-worker
// decision (mirrored.md §3.2) and ReduceOp parsing.

#include "core/device_spec.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/reduce_op.hpp"
#include "core/status.hpp"

namespace troupe {
namespace {

using ::testing::HasSubstr;

// Asserts parse(text) fails with invalid_argument naming the string and containing `problem`.
void expect_parse_error(const std::string& text, const std::string& problem) {
  try {
    DeviceSpec::parse(text);
    FAIL() << "parsed '" << text << "' without error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument);
    EXPECT_THAT(e.what(), HasSubstr("'" + text + "'"));
    EXPECT_THAT(e.what(), HasSubstr(problem));
  }
}

TEST(DeviceSpec, ParsesFullName) {
  auto s = DeviceSpec::parse("/job:worker/replica:0/task:1/device:CPU:0");
  EXPECT_EQ(s.job, "worker");
  EXPECT_EQ(s.replica, 0);
  EXPECT_EQ(s.task, 1);
  EXPECT_EQ(s.device_type, "CPU");
  EXPECT_EQ(s.device_index, 0);
  EXPECT_EQ(s.to_string(), "/job:worker/replica:0/task:1/device:CPU:0");
}

TEST(DeviceSpec, ParsesPartialForms) {
  EXPECT_EQ(DeviceSpec::parse("/device:GPU:1").to_string(), "/device:GPU:1");
  EXPECT_EQ(DeviceSpec::parse("GPU:1").to_string(), "/device:GPU:1");
  EXPECT_EQ(DeviceSpec::parse("CPU:0").to_string(), "/device:CPU:0");
  EXPECT_EQ(DeviceSpec::parse("device:CPU:3").to_string(), "/device:CPU:3");
  EXPECT_EQ(DeviceSpec::parse("/job:localhost").to_string(), "/job:localhost");
  EXPECT_EQ(DeviceSpec::parse("/task:1").to_string(), "/task:1");
  EXPECT_EQ(DeviceSpec::parse("/replica:2/task:3").to_string(), "/replica:2/task:3");
}

TEST(DeviceSpec, LegacyLowerCaseTypesAreUpperCased) {
  EXPECT_EQ(DeviceSpec::parse("/cpu:0").to_string(), "/device:CPU:0");
  EXPECT_EQ(DeviceSpec::parse("/gpu:1").device_type, "GPU");
  EXPECT_EQ(DeviceSpec::parse("gpu:0").to_string(), "/device:GPU:0");
  EXPECT_EQ(DeviceSpec::parse("/job:w/device:gpu:2").to_string(), "/job:w/device:GPU:2");
}

TEST(DeviceSpec, WildcardAndMissingIndexLeaveIndexUnset) {
  auto any = DeviceSpec::parse("/device:CPU:*");
  EXPECT_EQ(any.device_type, "CPU");
  EXPECT_FALSE(any.device_index.has_value());
  EXPECT_EQ(any.to_string(), "/device:CPU:*");
  EXPECT_FALSE(DeviceSpec::parse("GPU").device_index.has_value());
  EXPECT_FALSE(DeviceSpec::parse("/gpu:*").device_index.has_value());
}

TEST(DeviceSpec, OtherDeviceTypesKeptAsWritten) {
  EXPECT_EQ(DeviceSpec::parse("/device:XLA_CPU:0").device_type, "XLA_CPU");
}

TEST(DeviceSpec, EmptySpecPrintsEmpty) { EXPECT_EQ(DeviceSpec{}.to_string(), ""); }

TEST(DeviceSpec, RejectsEmpty) { expect_parse_error("", "empty"); }
TEST(DeviceSpec, RejectsMissingLeadingSlash) {
  expect_parse_error("job:worker/task:1", "missing leading '/'");
  expect_parse_error("task:1", "missing leading '/'");
  expect_parse_error("GPU:0/task:1", "missing leading '/'");
}
TEST(DeviceSpec, RejectsUnknownField) { expect_parse_error("/foo:1", "unknown field 'foo'"); }
TEST(DeviceSpec, RejectsRepeatedFields) {
  expect_parse_error("/job:a/job:b", "job given twice");
  expect_parse_error("/task:0/task:1", "task given twice");
  expect_parse_error("/replica:0/replica:0", "replica given twice");
  expect_parse_error("/device:CPU:0/GPU:1", "device given twice (second at 'GPU:1')");
}
TEST(DeviceSpec, RejectsNegativeOrNonNumericNumbers) {
  expect_parse_error("/task:-1", "task '-1' is not a non-negative integer");
  expect_parse_error("/replica:x", "replica 'x' is not a non-negative integer");
  expect_parse_error("/device:GPU:-2", "device index '-2' is not a non-negative integer");
  expect_parse_error("GPU:one", "device index 'one' is not a non-negative integer");
  expect_parse_error("/task:99999999999", "task '99999999999' is too large");
}
TEST(DeviceSpec, RejectsMissingValues) {
  expect_parse_error("/task:", "missing task");
  expect_parse_error("/task", "must be task:<value>");
  expect_parse_error("/job:", "job name ''");
  expect_parse_error("/gpu:", "missing device index after ':'");
}
TEST(DeviceSpec, RejectsMissingDeviceType) {
  expect_parse_error("/device::0", "missing device type");
  expect_parse_error("/device:", "missing device type");
  expect_parse_error("/device:GPU", "missing device index in 'device:GPU'");
}
TEST(DeviceSpec, RejectsGarbageAfterIndex) {
  expect_parse_error("/device:GPU:1:2", "garbage after the device index");
  expect_parse_error("/gpu:0:1", "garbage after the device index");
  expect_parse_error("/device:GPU:1x", "device index '1x'");
}
TEST(DeviceSpec, RejectsEmptyFieldsAndSlashes) {
  expect_parse_error("/job:w//task:0", "empty field ('//')");
  expect_parse_error("/job:w/", "trailing '/'");
  expect_parse_error("/", "trailing '/'");
}
TEST(DeviceSpec, RejectsBadNames) {
  expect_parse_error("/job:1worker", "job name '1worker'");
  expect_parse_error("/job:a-b", "job name 'a-b'");
  expect_parse_error("/device:G-PU:0", "device type 'G-PU' is not a name");
  expect_parse_error("/:0", "has no name before ':'");
  expect_parse_error("/job:a:b", "must be job:<value>");
}

TEST(DeviceSpec, MergeTakesOthersSetFields) {
  auto base = DeviceSpec::parse("/job:worker/replica:0/task:1/device:CPU:0");
  EXPECT_EQ(base.merge(DeviceSpec::parse("/gpu:2")).to_string(),
            "/job:worker/replica:0/task:1/device:GPU:2");
  EXPECT_EQ(base.merge(DeviceSpec::parse("/job:ps")).to_string(),
            "/job:ps/replica:0/task:1/device:CPU:0");
  // A wildcard index leaves the index alone, as TF's merge does field by field.
  EXPECT_EQ(base.merge(DeviceSpec::parse("/device:GPU:*")).to_string(),
            "/job:worker/replica:0/task:1/device:GPU:0");
  EXPECT_EQ(base.merge(DeviceSpec{}), base);
}

TEST(DeviceSpec, T4_CanonicalizeCpuWithTaskDefault) {
  EXPECT_EQ(canonicalize("/cpu:0", "/job:worker/task:1"),
            "/job:worker/replica:0/task:1/device:CPU:0");
}
TEST(DeviceSpec, T4_CanonicalizeCpuWithJobDefault) {
  EXPECT_EQ(canonicalize("/cpu:0", "/job:worker"), "/job:worker/replica:0/task:0/device:CPU:0");
}
TEST(DeviceSpec, T4_CanonicalizeGpuWithoutDefaultGetsLocalhost) {
  EXPECT_EQ(canonicalize("/gpu:0"), "/job:localhost/replica:0/task:0/device:GPU:0");
}
TEST(DeviceSpec, T6_CanonicalSingleMachineDevices) {
  EXPECT_EQ(canonicalize("GPU:0"), "/job:localhost/replica:0/task:0/device:GPU:0");
  EXPECT_EQ(canonicalize("GPU:1"), "/job:localhost/replica:0/task:0/device:GPU:1");
  EXPECT_EQ(canonicalize("/device:CPU:0", "GPU:1"), "/job:localhost/replica:0/task:0/device:CPU:0");
}
TEST(DeviceSpec, CanonicalizeDeviceFieldsWinOverDefault) {
  EXPECT_EQ(canonicalize("/job:ps/task:2/device:GPU:1", "/job:worker/task:1/device:CPU:0"),
            "/job:ps/replica:0/task:2/device:GPU:1");
  EXPECT_EQ(canonicalize("/job:chief"), "/job:chief/replica:0/task:0/device:CPU:0");
}
TEST(DeviceSpec, CanonicalizeRejectsBadDefaultNamingIt) {
  try {
    canonicalize("GPU:0", "/job:w//");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("'/job:w//'"));
  }
}
TEST(DeviceSpec, CanonicalizeWithoutJobAndTask) {
  EXPECT_EQ(canonicalize_without_job_and_task("/job:worker/task:3/device:GPU:1"),
            "/replica:0/device:GPU:1");
  EXPECT_EQ(canonicalize_without_job_and_task("/job:worker"), "/replica:0/device:CPU:0");
}

TEST(DeviceSpec, SingleWorker_LocalGpus) { EXPECT_TRUE(is_single_worker({"GPU:0", "GPU:1"})); }
TEST(DeviceSpec, SingleWorker_LocalhostAndBareMix) {
  EXPECT_TRUE(is_single_worker({"/job:localhost/replica:0/task:0/device:GPU:0", "GPU:1"}));
}
TEST(DeviceSpec, SingleWorker_TwoTasksAreMultiWorker) {
  EXPECT_FALSE(
      is_single_worker({"/job:worker/task:0/device:GPU:0", "/job:worker/task:1/device:GPU:0"}));
}
TEST(DeviceSpec, SingleWorker_OneRemoteWorker) {
  EXPECT_TRUE(
      is_single_worker({"/job:worker/task:0/device:GPU:0", "/job:worker/task:0/device:GPU:1"}));
}
TEST(DeviceSpec, SingleWorker_MixedLocalRemoteRejected) {
  try {
    is_single_worker({"GPU:0", "/job:worker/task:0/device:GPU:0"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument);
    EXPECT_THAT(e.what(),
                HasSubstr("a local device string may not name any job other than \"localhost\""));
    EXPECT_THAT(e.what(), HasSubstr("'/job:worker/task:0/device:GPU:0'"));
  }
}
TEST(DeviceSpec, SingleWorker_RemoteWithoutTaskRejected) {
  try {
    is_single_worker({"/job:worker/device:GPU:0"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("remote device string must specify a task: '/job:worker/device:GPU:0'"));
  }
}
TEST(DeviceSpec, SingleWorker_BadStringNamed) {
  EXPECT_THROW(is_single_worker({"GPU:0", "/bogus:1"}), Error);
}

TEST(ReduceOp, ParsesCaseInsensitively) {
  EXPECT_EQ(parse_reduce_op("sum"), ReduceOp::sum);
  EXPECT_EQ(parse_reduce_op("Mean"), ReduceOp::mean);
  EXPECT_EQ(parse_reduce_op("SUM"), ReduceOp::sum);
  EXPECT_EQ(reduce_op_name(ReduceOp::mean), "MEAN");
  EXPECT_EQ(parse_reduce_op(reduce_op_name(ReduceOp::sum)), ReduceOp::sum);
}
TEST(ReduceOp, RejectsOtherOpsNamingThem) {
  try {
    parse_reduce_op("max");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument);
    EXPECT_STREQ(e.what(), "reduce_op must be SUM or MEAN, got 'max'");
  }
}

}  // namespace
}  // namespace troupe
