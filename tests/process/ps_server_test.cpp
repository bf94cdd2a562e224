// `troupe server --job ps` as real processes on 127.0.0.1, reached through connect_ps_shards with
// mutual TLS and the shared secret: shards in task order, a killed ps named at the client, the
// job-over message and SIGTERM ending the server with 0, and `troupe launch --ps`.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <thread>

#include <caf/all.hpp>

#include "actors/ps_shard.hpp"
#include "coordinator/ps/connect_ps_shards.hpp"
#include "coordinator/ps/ps_client.hpp"
#include "core/status.hpp"
#include "messages/system_config.hpp"
#include "net/cluster_credentials.hpp"
#include "net/loopback_port_reservation.hpp"
#include "tests/process/child_process.hpp"

namespace troupe::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

Tensor floats(Shape shape, std::vector<float> values) {
  return Tensor::from_vector<float>(std::move(shape), values);
}

UpdateRule sgd(float learning_rate) {
  UpdateRule r;
  r.learning_rate = learning_rate;
  return r;
}

// A cluster of `ps` tasks on free ports, fresh credentials for them and a client, and the
// cluster file `troupe server --cluster` reads.
class PsServer : public ::testing::Test {
 protected:
  void make_cluster(int ps, bool tls = true) {
    std::vector<std::string> nodes{"client"}, addresses;
    // Held until the test ends, as `troupe launch` holds its tasks' ports: nothing else on the
    // machine takes one before its task listens (or while a task is restarted on it).
    reserved_ = std::make_unique<net::LoopbackPortReservation>(ps);
    const std::vector<int>& ports = reserved_->ports();
    for (int k = 0; k < ps; ++k) {
      nodes.push_back("ps" + std::to_string(k));
      addresses.push_back("127.0.0.1:" + std::to_string(ports[size_t(k)]));
    }
    credentials_ = make_cluster_credentials(nodes, tls);
    cluster_ = ClusterSpec::from_lists({{"ps", addresses}});
    cluster_file_ = credentials_.dir + "/cluster.json";
    std::ofstream(cluster_file_) << cluster_.to_json();
  }
  void TearDown() override { remove_cluster_credentials(credentials_); }

  std::unique_ptr<TroupeProcess> start_ps(int k) {
    std::vector<std::string> args{
        "server",          "--cluster",     cluster_file_,           "--job", "ps", "--task",
        std::to_string(k), "--secret-file", credentials_.secret_file};
    if (credentials_.tls)
      args.insert(args.end(), {"--tls-dir", credentials_.dir, "--node", "ps" + std::to_string(k)});
    else
      args.push_back("--no-tls");
    auto p = std::make_unique<TroupeProcess>(args);
    // Its first line says where it serves: it is listening from then on.
    auto line = p->read_line(120s);
    EXPECT_TRUE(line && contains(*line, "serving ps shard 'ps:" + std::to_string(k) + "' on " +
                                            cluster_.task_address("ps", k)))
        << line.value_or("(no line)") << p->err();
    return p;
  }

  ActorSystemOptions client_options() {
    ActorSystemOptions o;
    o.scheduler_threads = 2;
    if (credentials_.tls) set_tls_from_dir(o, credentials_.dir, "client");
    return o;
  }

  PsConnectOptions connect_options() {
    PsConnectOptions o;
    std::ifstream in(credentials_.secret_file);
    std::getline(in, o.secret);
    o.tls = credentials_.tls;
    o.timeout = 60s;
    return o;
  }

  std::unique_ptr<net::LoopbackPortReservation> reserved_;
  ClusterCredentials credentials_;
  ClusterSpec cluster_;
  std::string cluster_file_;
};

TEST_F(PsServer, TwoPsTasksOverTlsServeTheirShardsInTaskOrderUntilTheJobIsOver) {
  make_cluster(2);
  auto ps0 = start_ps(0);
  auto ps1 = start_ps(1);
  caf::actor_system_config cfg;
  configure_actor_system(cfg, client_options());
  caf::actor_system sys{cfg};
  PsShards shards = connect_ps_shards(sys, cluster_, connect_options());
  ASSERT_EQ(shards.handles.size(), 2u);
  EXPECT_EQ(shards.tasks, (std::vector<std::string>{"/job:ps/task:0", "/job:ps/task:1"}));
  PsClient client(sys, 60s);
  client.name_shards(shards.handles, shards.labels());
  // Each shard holds its own variable; an optimizer step runs on the shard that owns it.
  client.create(shards.handles[0], ps_create_msg{{"a", "", {}, {}}, floats({2}, {1, 2})});
  client.create(shards.handles[1], ps_create_msg{{"b", "", {}, {}}, floats({1}, {10})});
  client.apply(shards.handles[1],
               ps_apply_msg{"b", 1, to_rule_msg(sgd(0.5f)), {}, floats({1}, {4}), {}});
  EXPECT_EQ(client.read(shards.handles[0], "a").to_vector<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ(client.read(shards.handles[1], "b").to_vector<float>(), (std::vector<float>{8}));
  // Errors come from the shard of task 1, which calls itself ps:1.
  try {
    client.read(shards.handles[1], "a");
    FAIL() << "ps:1 read a variable it does not hold";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "ps shard 'ps:1'")) << e.what();
  }
  stop_ps_shards(shards);
  EXPECT_EQ(ps0->wait(60s), 0) << ps0->err();
  EXPECT_EQ(ps1->wait(60s), 0) << ps1->err();
  EXPECT_TRUE(contains(ps0->out(), "the job is over")) << ps0->out();
}

TEST_F(PsServer, AKilledPsProcessIsNamedAtTheClientByShardAndTask) {
  make_cluster(1);
  auto ps0 = start_ps(0);
  caf::actor_system_config cfg;
  configure_actor_system(cfg, client_options());
  caf::actor_system sys{cfg};
  PsShards shards = connect_ps_shards(sys, cluster_, connect_options());
  PsClient client(sys, 120s);  // far above the error's arrival: a hang would show as a timeout
  client.name_shards(shards.handles, shards.labels());
  client.create(shards.handles[0], ps_create_msg{{"w", "", {}, {}}, floats({1}, {1})});
  ps0->signal(SIGKILL);
  ps0->wait(60s);
  try {
    client.read(shards.handles[0], "w");
    FAIL() << "a read from a killed ps process succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::unavailable) << e.what();
    EXPECT_TRUE(contains(e.what(), "ps shard 'ps:0' (/job:ps/task:0 at " +
                                       cluster_.task_address("ps", 0) +
                                       ") serving variable 'w' went away: "))
        << e.what();
  }
}

// replication 2 across processes: ps:0's variables have their backup in the ps:1 process
// (copies travel ps:0 -> ps:1 through the client's node); kill -9 of ps:0 between and during
// optimizer steps loses nothing that was acknowledged, and a repeated step id is applied once.
TEST_F(PsServer, AKilledPrimaryPsProcessFailsOverToItsBackupProcessLosingNothingAcknowledged) {
  make_cluster(2);
  auto ps0 = start_ps(0);
  auto ps1 = start_ps(1);
  caf::actor_system_config cfg;
  configure_actor_system(cfg, client_options());
  caf::actor_system sys{cfg};
  PsShards shards = connect_ps_shards(sys, cluster_, connect_options());
  PsClient client(sys, 120s);
  client.name_shards(shards.handles, shards.labels());
  client.replicate(shards.handles);
  client.create(shards.handles[0], ps_create_msg{{"a", "", {}, {}}, floats({1}, {1})});
  client.create(shards.handles[1], ps_create_msg{{"b", "", {}, {}}, floats({1}, {1})});
  auto step = [&](uint64_t id, const std::string& name) {
    return client.apply(
        shards.handles[name == "a" ? 0 : 1],
        ps_apply_msg{name, id, to_rule_msg(sgd(0.5f)), {}, floats({1}, {0.125f}), {}});
  };
  for (uint64_t id = 1; id <= 10; ++id) EXPECT_TRUE(step(id, "a").applied);
  ps0->signal(SIGKILL);
  // Sent while ps:0 dies: it lands on ps:0 before the kill (then its copy is on ps:1) or goes
  // to ps:1 after; either way once.
  EXPECT_EQ(step(11, "a").updates, 11u);
  ps0->wait(60s);
  EXPECT_FALSE(step(11, "a").applied);  // a retry of an acknowledged step
  for (uint64_t id = 12; id <= 30; ++id) EXPECT_TRUE(step(id, "a").applied);
  for (uint64_t id = 1; id <= 5; ++id) EXPECT_TRUE(step(id, "b").applied);  // no backup now
  EXPECT_EQ(client.failed_over(), 1u);
  // 30 steps of -0.5 * 0.125 each, exactly.
  EXPECT_EQ(client.read(shards.handles[0], "a").to_vector<float>(), (std::vector<float>{-0.875f}));
  EXPECT_EQ(client.read(shards.handles[1], "b").to_vector<float>(), (std::vector<float>{0.6875f}));
  stop_ps_shards(shards);
  EXPECT_EQ(ps1->wait(60s), 0) << ps1->err();
  EXPECT_TRUE(contains(ps1->err(), "primary 'ps:0' (/job:ps/task:0")) << ps1->err();
}

TEST_F(PsServer, SigtermStopsAPlainPsServerWithExitZero) {
  make_cluster(1, /*tls=*/false);
  auto ps0 = start_ps(0);
  ps0->signal(SIGTERM);
  EXPECT_EQ(ps0->wait(60s), 0) << ps0->err();
  EXPECT_TRUE(contains(ps0->out(), "stopped by Terminated")) << ps0->out();
}

TEST_F(PsServer, ConnectNamesThePsTaskThatDoesNotAnswer) {
  make_cluster(2, /*tls=*/false);
  auto ps0 = start_ps(0);  // task 1 is never started
  caf::actor_system_config cfg;
  configure_actor_system(cfg, client_options());
  caf::actor_system sys{cfg};
  auto options = connect_options();
  options.timeout = 500ms;
  try {
    connect_ps_shards(sys, cluster_, options);
    FAIL() << "connected to a ps task that is not running";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::unavailable) << e.what();
    EXPECT_TRUE(contains(e.what(), "ps task /job:ps/task:1 at " + cluster_.task_address("ps", 1) +
                                       " did not answer within 500 ms"))
        << e.what();
  }
  ps0->signal(SIGTERM);
  EXPECT_EQ(ps0->wait(60s), 0) << ps0->err();
}

TEST_F(PsServer, AWrongSecretIsRefusedNamingThePsTask) {
  make_cluster(1, /*tls=*/false);
  auto ps0 = start_ps(0);
  caf::actor_system_config cfg;
  configure_actor_system(cfg, client_options());
  caf::actor_system sys{cfg};
  auto options = connect_options();
  options.secret = "not the cluster's secret";
  try {
    connect_ps_shards(sys, cluster_, options);
    FAIL() << "a wrong secret was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::failed_precondition) << e.what();
    EXPECT_TRUE(contains(e.what(), "ps task /job:ps/task:0 at " + cluster_.task_address("ps", 0) +
                                       ": authentication failed"))
        << e.what();
  }
  ps0->signal(SIGTERM);
  EXPECT_EQ(ps0->wait(60s), 0) << ps0->err();
}

TEST(PsConnect, AClusterWithoutPsTasksIsRefusedByName) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  try {
    connect_ps_shards(sys, ClusterSpec::from_lists({{"worker", {"127.0.0.1:1"}}}), {});
    FAIL() << "no ps job was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument);
    EXPECT_TRUE(contains(e.what(), "the cluster has no \"ps\" job (jobs: worker)")) << e.what();
  }
  PsConnectOptions zero;
  zero.timeout = 0ms;
  try {
    connect_ps_shards(sys, ClusterSpec::from_lists({{"ps", {"127.0.0.1:1"}}}), zero);
    FAIL() << "a zero timeout was accepted";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "timeout must be >= 1 ms, got 0")) << e.what();
  }
}

TEST(PsConnect, ShardNamesMustMatchTheShards) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  PsClient client(sys);
  try {
    client.name_shards({caf::actor{}}, {});
    FAIL() << "one shard with no name was accepted";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "ps client: 1 shards but 0 names")) << e.what();
  }
}

TEST(PsServerUsage, APsTaskRefusesTrainingOptions) {
  const std::string cluster =
      R"(TF_CONFIG={"cluster": {"worker": ["127.0.0.1:1"], "ps": ["127.0.0.1:2"]}, "task": {"type": "ps", "index": 0}})";
  TroupeProcess file({"server", "experiment.yaml", "--no-tls"}, {cluster, "TROUPE_SECRET=s"});
  EXPECT_EQ(file.wait(60s), 2) << file.err();
  EXPECT_TRUE(contains(file.err(),
                       "troupe server /job:ps/task:0: a ps task serves a shard and "
                       "takes no FILE (those are for chief and worker tasks)"))
      << file.err();
  TroupeProcess steps({"server", "--steps", "5", "--resume", "--no-tls"},
                      {cluster, "TROUPE_SECRET=s"});
  EXPECT_EQ(steps.wait(60s), 2) << steps.err();
  EXPECT_TRUE(contains(steps.err(), "takes no --resume, --steps")) << steps.err();
}

TEST(PsServerUsage, APsTaskThatCannotListenNamesItsAddress) {
  // Another socket already listens on the task's port.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string address = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  TroupeProcess p({"server", "--no-tls"}, {R"(TF_CONFIG={"cluster": {"ps": [")" + address +
                                               R"("]}, "task": {"type": "ps", "index": 0}})",
                                           "TROUPE_SECRET=s"});
  EXPECT_EQ(p.wait(60s), 1) << p.err();
  ::close(fd);
  EXPECT_TRUE(contains(p.err(), "troupe server /job:ps/task:0: cannot listen on " + address))
      << p.err();
}

TEST(PsLaunchUsage, BadPsFlagsAreRefusedBeforeAnyProcessStarts) {
  TroupeProcess negative({"launch", "-n", "1", "--ps", "-1"});
  EXPECT_EQ(negative.wait(60s), 2) << negative.err();
  EXPECT_TRUE(contains(negative.err(), "--ps must be in [0, 256], got -1")) << negative.err();
  TroupeProcess many({"launch", "-n", "1", "--ps", "257"});
  EXPECT_EQ(many.wait(60s), 2) << many.err();
  EXPECT_TRUE(contains(many.err(), "--ps must be in [0, 256], got 257")) << many.err();
  // The embedded demo runs in one process: refused before any ps task or evaluator starts.
  TroupeProcess demo({"launch", "-n", "1", "--ps", "1", "--evaluator"});
  EXPECT_EQ(demo.wait(60s), 2) << demo.err();
  EXPECT_TRUE(contains(demo.err(), "the embedded demo: strategy.kind is mirrored")) << demo.err();
  EXPECT_FALSE(contains(demo.out(), "started")) << demo.out();
  // A parameter_server experiment trains under launch when its cluster is the one launched.
  TroupeProcess ps_file({"launch", "-n", "1", "--ps", "2",
                         std::string(TROUPE_SOURCE_DIR) + "/examples/ps_embedding.yaml"});
  EXPECT_EQ(ps_file.wait(60s), 2) << ps_file.err();
  EXPECT_TRUE(contains(ps_file.err(),
                       "strategy.num_ps 2 and strategy.workers 2 do not match --ps 2 and -n 1"))
      << ps_file.err();
  EXPECT_FALSE(contains(ps_file.out(), "started")) << ps_file.out();
}

}  // namespace
}  // namespace troupe::testing

namespace troupe::testing {
namespace {

// `troupe launch --ps P` with a small multi-worker experiment in a directory of its own.
class PsLaunch : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("troupe_ps_launch_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write_experiment(int steps) {
    std::string path = (dir_ / "mw.yaml").string();
    std::ofstream(path)
        << "name: mw\nseed: 7\nstrategy: {kind: multi_worker_mirrored, devices: [CPU:0]}\n"
        << "model: {kind: mlp, input_dim: 16, hidden: [12], classes: 4}\n"
        << "data: {kind: synthetic_classification, examples: 1024, global_batch: 64}\n"
        << "optimizer: {kind: sgd, learning_rate: 0.05}\n"
        << "train: {steps: " << steps
        << ", log_every: 4, checkpoint_dir: " << (dir_ / "mw").string() << "}\n";
    return path;
  }

  static std::string finish(TroupeProcess& p, int* code) {
    std::string text;
    while (auto line = p.read_line(300s)) text += *line + "\n";
    *code = p.wait(60s).value_or(-1);
    return text + p.out() + "\n--- stderr ---\n" + p.err();
  }

  fs::path dir_;
};

TEST_F(PsLaunch, PsTasksStartBeforeTheWorkersAndAreStoppedCleanlyWhenTheyFinish) {
  TroupeProcess launch({"launch", "-n", "1", "--ps", "2", write_experiment(8)});
  int code = -1;
  std::string out = finish(launch, &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_TRUE(contains(out, "troupe launch: started /job:ps/task:1")) << out;
  EXPECT_TRUE(contains(out,
                       "[ps:0] troupe server /job:ps/task:0: serving ps shard 'ps:0' on "
                       "127.0.0.1:"))
      << out;
  EXPECT_TRUE(contains(out, "with mutual TLS")) << out;
  EXPECT_TRUE(contains(out, "[ps:1] troupe server /job:ps/task:1: stopped by Terminated")) << out;
  EXPECT_TRUE(contains(out, "the workers have finished; stopping the ps tasks")) << out;
  EXPECT_TRUE(contains(out, "all 2 ps task(s) stopped")) << out;
  // The workers are told how the ps tasks relate to their strategy, not left to guess.
  EXPECT_TRUE(contains(out,
                       "the workers train with multi_worker_mirrored, which does not use "
                       "the ps tasks"))
      << out;
}

TEST_F(PsLaunch, AKilledPsTaskIsNamedAndTheLaunchFails) {
  TroupeProcess launch({"launch", "-n", "1", "--ps", "1", "--no-tls", write_experiment(1000000)});
  int ps_pid = 0;
  std::string text;
  std::regex started(R"(started /job:ps/task:0 \(pid (\d+)\))");
  while (ps_pid == 0) {
    auto line = launch.read_line(120s);
    ASSERT_TRUE(line) << text << launch.err();
    text += *line + "\n";
    std::smatch m;
    if (std::regex_search(*line, m, started)) ps_pid = std::stoi(m[1]);
  }
  // Wait until the ps listens (its first line), so the kill hits a serving task.
  while (!contains(text, "[ps:0] troupe server")) {
    auto line = launch.read_line(120s);
    ASSERT_TRUE(line) << text << launch.err();
    text += *line + "\n";
  }
  ASSERT_EQ(::kill(ps_pid, SIGKILL), 0);
  int code = -1;
  std::string out = text + finish(launch, &code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_TRUE(contains(out, "troupe launch: failed: /job:ps/task:0 (pid " + std::to_string(ps_pid) +
                                ") was killed by signal 9 (SIGKILL)"))
      << out;
}

}  // namespace
}  // namespace troupe::testing

namespace troupe::testing {
namespace {

TEST(PsBench, ReportsDenseAndSparseThroughputNextToTcpAndAShardsKernelsAndStopsItsPsTasks) {
  TroupeProcess bench({"bench", "ps", "--json", "--reps", "1", "--steps", "2"});
  auto code = bench.wait(std::chrono::seconds(280));
  ASSERT_EQ(code, 0) << bench.out() << bench.err();
  for (const char* key :
       {"\"tcp_gbps\":", "\"pull_gbps\":", "\"push_gbps\":", "\"pull_ratio_to_tcp\":",
        "\"rows\":1000000,\"dim\":64,\"ps\":2,"
        "\"workers\":2,\"ids_per_step\":1024",
        "\"rows_per_s\":", "\"shard_kernels\":{\"rows\":500000,\"ids\":512,\"gather_us\":",
        "\"sgd_apply_us\":"})
    EXPECT_TRUE(contains(bench.out(), key)) << key << " missing in " << bench.out();
  EXPECT_FALSE(contains(bench.out(), "nan")) << bench.out();
  EXPECT_FALSE(contains(bench.out(), "\"gather_us\":0.00")) << bench.out();
}

TEST(PsBench, NonPositiveCountsAreRefused) {
  TroupeProcess steps({"bench", "ps", "--steps", "0"});
  EXPECT_EQ(steps.wait(std::chrono::seconds(60)), 2) << steps.err();
  EXPECT_TRUE(contains(steps.err(), "--steps must be >= 1, got 0")) << steps.err();
  TroupeProcess reps({"bench", "ps", "--reps", "-2"});
  EXPECT_EQ(reps.wait(std::chrono::seconds(60)), 2) << reps.err();
  EXPECT_TRUE(contains(reps.err(), "--reps must be >= 1, got -2")) << reps.err();
}

}  // namespace
}  // namespace troupe::testing

namespace troupe::testing {
namespace {

// True once /proc reports every thread of `pid` stopped (state T), false after a minute: a group
// stop reaches each thread on its own.
bool wait_until_stopped(pid_t pid) {
  auto stopped = [](const fs::path& stat_file) {
    std::ifstream stat(stat_file);
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const auto end_of_name = text.rfind(')');
    return end_of_name != std::string::npos && end_of_name + 2 < text.size() &&
           text[end_of_name + 2] == 'T';
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (std::chrono::steady_clock::now() < deadline) {
    bool all = true;
    std::error_code error;
    for (auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", error))
      all = all && stopped(task.path() / "stat");
    if (all && !error) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling a kernel state
  }
  return false;
}

// A ps process that is stopped (SIGSTOP) keeps its connection open: no down message comes, so
// the request timeout is what ends the wait, and it names the shard and its task.
TEST_F(PsServer, AStoppedPsProcessIsNamedAtTheRequestTimeout) {
  make_cluster(1, /*tls=*/false);
  auto ps0 = start_ps(0);
  caf::actor_system_config cfg;
  configure_actor_system(cfg, client_options());
  caf::actor_system sys{cfg};
  PsShards shards = connect_ps_shards(sys, cluster_, connect_options());
  PsClient client(sys, 1000ms);
  client.name_shards(shards.handles, shards.labels());
  client.create(shards.handles[0], ps_create_msg{{"w", "", {}, {}}, floats({1}, {1})});
  ps0->signal(SIGSTOP);
  // kill() only queues the stop: wait until the kernel reports the process stopped, or a fast
  // ps could still answer the read below.
  ASSERT_TRUE(wait_until_stopped(ps0->pid())) << "ps process " << ps0->pid() << " did not stop";
  try {
    client.read(shards.handles[0], "w");
    FAIL() << "a stopped ps process answered";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::deadline_exceeded) << e.what();
    EXPECT_TRUE(contains(e.what(), "ps shard 'ps:0' (/job:ps/task:0 at " +
                                       cluster_.task_address("ps", 0) +
                                       ") serving variable 'w' did not answer within 1000 ms"))
        << e.what();
  }
  ps0->signal(SIGCONT);
  ps0->signal(SIGTERM);
  EXPECT_EQ(ps0->wait(60s), 0) << ps0->err();
}

}  // namespace
}  // namespace troupe::testing
