// Two hosts in one machine: each worker runs in its own network namespace with its own address on
// a veth pair (10.213.X.1 and 10.213.X.2), so nothing can lean on a shared loopback. The test
// creates the namespaces itself and skips, saying why, where that is not permitted.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "experiment/checkpoint/checkpoint.hpp"
#include "tests/process/child_process.hpp"

namespace troupe::testing {
namespace {

namespace fs = std::filesystem;

// Runs `ip args...`; returns "" on success, else what it printed.
std::string ip(const std::vector<std::string>& args) {
  ChildProcess p("/usr/sbin/ip", args);
  auto code = p.wait(std::chrono::seconds(10));
  if (code && *code == 0) return "";
  std::string cmd = "ip";
  for (auto& a : args) cmd += " " + a;
  return cmd + " failed: " + p.out() + p.err();
}

class TwoHosts : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string id = std::to_string(::getpid() % 100000);
    ns_ = {"trpa" + id, "trpb" + id};
    subnet_ = "10.213." + std::to_string(::getpid() % 250) + ".";
    const std::string va = "trva" + id, vb = "trvb" + id;
    std::vector<std::vector<std::string>> setup{
        {"netns", "add", ns_[0]},
        {"netns", "add", ns_[1]},
        {"link", "add", va, "type", "veth", "peer", "name", vb},
        {"link", "set", va, "netns", ns_[0]},
        {"link", "set", vb, "netns", ns_[1]},
        {"-n", ns_[0], "addr", "add", subnet_ + "1/24", "dev", va},
        {"-n", ns_[1], "addr", "add", subnet_ + "2/24", "dev", vb},
        {"-n", ns_[0], "link", "set", va, "up"},
        {"-n", ns_[1], "link", "set", vb, "up"},
        {"-n", ns_[0], "link", "set", "lo", "up"},
        {"-n", ns_[1], "link", "set", "lo", "up"}};
    for (auto& step : setup) {
      std::string failed = ip(step);
      if (!failed.empty()) {
        skip_ = "network namespaces are not permitted here (" + failed + ")";
        return;
      }
    }
    dir_ = fs::temp_directory_path() / ("troupe_two_hosts_" + id);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    for (auto& ns : ns_) ip({"netns", "del", ns});  // takes its end of the veth pair with it
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  std::vector<std::string> ns_;
  std::string subnet_, skip_;
  fs::path dir_;
};

TEST_F(TwoHosts, WorkersOnTwoAddressesTrainLikeOneProcess) {
  if (!skip_.empty()) GTEST_SKIP() << skip_;
  const std::string experiment = (dir_ / "mw.yaml").string();
  auto write = [&](const std::string& run) {
    std::ofstream(experiment)
        << "name: mw\nseed: 3\nstrategy: {kind: multi_worker_mirrored, devices: [CPU:0, CPU:1]}\n"
        << "model: {kind: mlp, input_dim: 16, hidden: [8], classes: 3}\n"
        << "data: {kind: synthetic_classification, examples: 512, global_batch: 32, shuffle: "
           "true}\n"
        << "optimizer: {kind: sgd, learning_rate: 0.1}\n"
        << "train: {steps: 10, log_every: 5, checkpoint_dir: " << (dir_ / run).string() << "}\n";
  };
  write("hosts");
  const std::string cluster = (dir_ / "cluster.json").string();
  std::ofstream(cluster) << R"({"worker": [")" << subnet_ << R"(1:2222", ")" << subnet_
                         << R"(2:2222"]})";
  const std::string secret = (dir_ / "secret").string();
  std::ofstream(secret) << "a-secret-of-the-two-hosts-test";
  std::vector<std::unique_ptr<ChildProcess>> servers;
  for (int i = 0; i < 2; ++i)
    servers.push_back(std::make_unique<ChildProcess>(
        "/usr/sbin/ip",
        std::vector<std::string>{"netns", "exec", ns_[size_t(i)], troupe_binary(), "server",
                                 experiment, "--cluster", cluster, "--job", "worker", "--task",
                                 std::to_string(i), "--secret-file", secret, "--no-tls"}));
  for (int i = 0; i < 2; ++i) {
    auto code = servers[size_t(i)]->wait(std::chrono::seconds(120));
    EXPECT_EQ(code, 0) << "worker " << i << ":\n"
                       << servers[size_t(i)]->out() << servers[size_t(i)]->err();
  }
  EXPECT_TRUE(contains(servers[0]->err(), "joining 2 worker(s) from " + subnet_ + "1:2222"))
      << servers[0]->err();
  // Two addresses are two hosts: no shared-memory rendezvous between them.
  EXPECT_FALSE(contains(servers[0]->err(), "meet in shared memory")) << servers[0]->err();
  write("local");
  TroupeProcess local({"run", experiment});
  ASSERT_EQ(local.wait(std::chrono::seconds(120)), 0) << local.out() << local.err();
  auto a = checkpoint::read_checkpoint(*checkpoint::latest_checkpoint((dir_ / "hosts").string()));
  auto b = checkpoint::read_checkpoint(*checkpoint::latest_checkpoint((dir_ / "local").string()));
  ASSERT_FALSE(a.tensors.empty());
  for (auto& [name, t] : a.tensors) {
    if (t.dtype() != DType::float32) continue;
    const Tensor& u = b.tensors.at(name);
    for (int64_t i = 0; i < t.num_elements(); ++i)
      ASSERT_NEAR(t.data<float>()[i], u.data<float>()[i], 1e-5) << name << "[" << i << "]";
  }
}

}  // namespace
}  // namespace troupe::testing
