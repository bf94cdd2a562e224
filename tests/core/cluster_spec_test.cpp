// ClusterSpec: the dense and sparse forms (cluster-and-ps.md §1.4), lookups, task names, the
// as_dict round trip, address checks; TaskSpec's device names (§1.3, §3.6).

#include "core/cluster_spec.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/host_port.hpp"
#include "core/status.hpp"
#include "core/task_spec.hpp"

namespace troupe {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Asserts from_json(text) throws invalid_argument starting with "<field>: " and holding `problem`.
void expect_cluster_error(const std::string& text, const std::string& field,
                          const std::string& problem) {
  try {
    ClusterSpec::from_json(Json::parse(text));
    FAIL() << "accepted " << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument);
    EXPECT_THAT(e.what(), StartsWith(field + ": "));
    EXPECT_THAT(e.what(), HasSubstr(problem));
  }
}

TEST(ClusterSpec, ExampleAFromSeed003) {
  auto spec = ClusterSpec::parse(R"({
    "worker": ["10.244.2.141:2222", "10.244.2.142:2222"],
    "ps": ["10.244.2.140:2222"]})");
  EXPECT_THAT(spec.jobs(), ElementsAre("ps", "worker"));
  EXPECT_EQ(spec.num_tasks("worker"), 2);
  EXPECT_EQ(spec.num_tasks("ps"), 1);
  EXPECT_EQ(spec.task_address("worker", 0), "10.244.2.141:2222");
  EXPECT_EQ(spec.task_address("worker", 1), "10.244.2.142:2222");
  EXPECT_EQ(spec.task_address("ps", 0), "10.244.2.140:2222");
  EXPECT_THAT(spec.task_names(),
              ElementsAre("/job:ps/task:0", "/job:worker/task:0", "/job:worker/task:1"));
}

TEST(ClusterSpec, ExampleBAndFlagsFormAgree) {
  auto from_json = ClusterSpec::parse(R"({"ps": ["ps0:2222", "ps1:2222"],
      "worker": ["worker0:2222", "worker1:2222", "worker2:2222"]})");
  auto from_lists =
      ClusterSpec::from_lists({{"ps", {"ps0:2222", "ps1:2222"}},
                               {"worker", {"worker0:2222", "worker1:2222", "worker2:2222"}}});
  EXPECT_EQ(from_json, from_lists);
  EXPECT_EQ(from_json.num_tasks("worker"), 3);
  EXPECT_THAT(from_json.task_indices("ps"), ElementsAre(0, 1));
}

TEST(ClusterSpec, SparseJobKeepsItsIndicesAndHoles) {
  auto spec = ClusterSpec::parse(R"({"worker": {"1": "w1:2222", "3": "w3:2222"}, "ps": ["p:1"]})");
  EXPECT_EQ(spec.num_tasks("worker"), 2);  // TF counts defined tasks, not max index + 1
  EXPECT_THAT(spec.task_indices("worker"), ElementsAre(1, 3));
  auto tasks = spec.job_tasks("worker");  // TF job_tasks: None in the holes
  ASSERT_EQ(tasks.size(), 4u);
  EXPECT_FALSE(tasks[0]);
  EXPECT_EQ(tasks[1], "w1:2222");
  EXPECT_FALSE(tasks[2]);
  EXPECT_EQ(tasks[3], "w3:2222");
  EXPECT_EQ(spec.task_address("worker", 3), "w3:2222");
  EXPECT_TRUE(spec.has_task("worker", 1));
  EXPECT_FALSE(spec.has_task("worker", 0));
  EXPECT_THAT(spec.task_names(),
              ElementsAre("/job:ps/task:0", "/job:worker/task:1", "/job:worker/task:3"));
}

TEST(ClusterSpec, SparseWithoutHolesEqualsDense) {
  EXPECT_EQ(ClusterSpec::parse(R"({"worker": {"1": "b:2", "0": "a:1"}})"),
            ClusterSpec::parse(R"({"worker": ["a:1", "b:2"]})"));
}

TEST(ClusterSpec, AsJsonIsDenseListOrSparseObjectLikeTfAsDict) {
  auto dense = ClusterSpec::parse(R"({"worker": ["a:1", "b:2"], "chief": ["c:3"]})");
  EXPECT_EQ(dense.to_json(), R"({"chief":["c:3"],"worker":["a:1","b:2"]})");
  auto sparse = ClusterSpec::parse(R"({"worker": {"2": "w:2", "0": "w:1"}})");
  EXPECT_EQ(sparse.to_json(), R"({"worker":{"0":"w:1","2":"w:2"}})");
  EXPECT_EQ(ClusterSpec::parse(dense.to_json()), dense);
  EXPECT_EQ(ClusterSpec::parse(sparse.to_json()), sparse);
}

TEST(ClusterSpec, LookupsOfMissingJobsAndTasksAreNotFound) {
  auto spec = ClusterSpec::parse(R"({"worker": ["a:1"]})");
  EXPECT_FALSE(spec.has_job("ps"));
  try {
    spec.num_tasks("ps");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::not_found);
    EXPECT_THAT(e.what(), HasSubstr("\"ps\""));
  }
  try {
    spec.task_address("worker", 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::not_found);
    EXPECT_THAT(e.what(), HasSubstr("index 1 in job \"worker\""));
  }
}

TEST(ClusterSpec, EmptyJobIsKeptAsTfDoes) {
  auto spec = ClusterSpec::parse(R"({"worker": []})");
  EXPECT_TRUE(spec.has_job("worker"));
  EXPECT_EQ(spec.num_tasks("worker"), 0);
  EXPECT_TRUE(spec.job_tasks("worker").empty());
}

TEST(ClusterSpec, ShapeErrorsNameTheField) {
  expect_cluster_error(R"(["a:1"])", "cluster", "expected an object");
  expect_cluster_error(R"({"worker": "a:1"})", "cluster.worker", "list of addresses or an object");
  expect_cluster_error(R"({"worker": ["a:1", 7]})", "cluster.worker[1]", "got number");
  expect_cluster_error(R"({"worker": {"x": "a:1"}})", "cluster.worker[\"x\"]",
                       "non-negative integer");
  expect_cluster_error(R"({"worker": {"-1": "a:1"}})", "cluster.worker[\"-1\"]",
                       "non-negative integer");
  expect_cluster_error(R"({"worker": {"01": "a:1"}})", "cluster.worker[\"01\"]", "leading zeros");
  expect_cluster_error(R"({"worker": {"1": null}})", "cluster.worker[\"1\"]", "got null");
  expect_cluster_error(R"({"job:w": ["a:1"]})", "cluster.job:w", "job name \"job:w\"");
}

TEST(ClusterSpec, AddressErrorsNameTheTask) {
  expect_cluster_error(R"({"worker": ["a:1", "b"]})", "cluster.worker[1]", "has no port");
  expect_cluster_error(R"({"worker": ["a:0"]})", "cluster.worker[0]", "outside 1-65535");
  expect_cluster_error(R"({"worker": ["a:65536"]})", "cluster.worker[0]", "outside 1-65535");
  expect_cluster_error(R"({"worker": ["a:http"]})", "cluster.worker[0]", "not a number");
  expect_cluster_error(R"({"worker": [":2222"]})", "cluster.worker[0]", "has no host");
  expect_cluster_error(R"({"worker": ["a b:1"]})", "cluster.worker[0]", "invalid character");
  expect_cluster_error(R"({"worker": ["::1:1"]})", "cluster.worker[0]", "IPv6 host in brackets");
  expect_cluster_error(R"({"ps": {"4": "p:"}})", "cluster.ps[4]", "has no port");
}

TEST(ClusterSpec, DuplicateAddressNamesBothTasks) {
  expect_cluster_error(R"({"ps": ["h:2222"], "worker": ["w:1", "H:2222"]})", "cluster.worker[1]",
                       "\"H:2222\" is already used by cluster.ps[0]");
}

TEST(ClusterSpec, ParseNamesTheSourceWhenGiven) {
  const std::string bad = R"({"worker": ["w"]})";
  for (const std::string source : {"", "hosts.json"}) {
    try {
      ClusterSpec::parse(bad, source);
      FAIL();
    } catch (const Error& e) {
      EXPECT_THAT(e.what(),
                  StartsWith((source.empty() ? "" : source + ": ") + "cluster.worker[0]: "));
    }
  }
  try {
    ClusterSpec::parse("{\"worker\": [}", "hosts.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), StartsWith("hosts.json: line 1, column 13: "));
  }
}

TEST(HostPort, AcceptsNamesIpv4AndBracketedIpv6) {
  EXPECT_EQ(HostPort::parse("worker-0.svc_local:2222", "f").port, 2222);
  EXPECT_EQ(HostPort::parse("10.0.0.1:65535", "f").host, "10.0.0.1");
  EXPECT_EQ(HostPort::parse("[::1]:1", "f").host, "[::1]");
  EXPECT_EQ(HostPort::parse("LocalHost:02222", "f").key(), "localhost:2222");
  // What a socket takes: an IPv6 address without its brackets, anything else as written.
  EXPECT_EQ(HostPort::parse("[::1]:1", "f").socket_host(), "::1");
  EXPECT_EQ(HostPort::parse("10.0.0.1:1", "f").socket_host(), "10.0.0.1");
}

TEST(TaskSpec, NamesAndDevicePrefix) {
  TaskSpec worker1{"worker", 1};
  EXPECT_EQ(worker1.name(), "/job:worker/task:1");
  EXPECT_EQ(worker1.device_prefix(), "/job:worker/replica:0/task:1");
  EXPECT_EQ(task_name("ps", 0), "/job:ps/task:0");
}

// cluster-and-ps.md §3.6: worker 1's GPUs canonicalise to /job:worker/replica:0/task:1/...
TEST(TaskSpec, CanonicalisesLocalDevicesAgainstTheTask) {
  TaskSpec worker1{"worker", 1};
  EXPECT_EQ(worker1.canonicalize("GPU:0"), "/job:worker/replica:0/task:1/device:GPU:0");
  EXPECT_EQ(worker1.canonicalize("/device:GPU:1"), "/job:worker/replica:0/task:1/device:GPU:1");
  EXPECT_EQ(worker1.canonicalize("/cpu:0"), "/job:worker/replica:0/task:1/device:CPU:0");
  EXPECT_EQ(worker1.canonicalize(""), "/job:worker/replica:0/task:1/device:CPU:0");
  EXPECT_EQ(worker1.canonicalize(worker1.name() + "/device:GPU:1"),
            "/job:worker/replica:0/task:1/device:GPU:1");
  // Fields the device names itself win over the task's, as in TF's canonicalize(d, default).
  EXPECT_EQ(worker1.canonicalize("/job:ps/task:0"), "/job:ps/replica:0/task:0/device:CPU:0");
  EXPECT_THROW(worker1.canonicalize("GPU:x"), Error);
}

}  // namespace
}  // namespace troupe
