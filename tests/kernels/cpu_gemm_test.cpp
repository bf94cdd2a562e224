// The float32 GEMM libraries side by side: oneDNN (when the build has it) against OpenBLAS on odd
// shapes, every transpose, and alpha/beta, within float tolerance; and oneDNN staying on the
// calling thread.

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "kernel_test_util.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu_gemm.hpp"

namespace troupe {
namespace {

bool have_onednn() {
  auto all = available_cpu_gemms();
  return std::find(all.begin(), all.end(), CpuGemm::onednn) != all.end();
}

// Threads of this process, from /proc/self/status.
int thread_count() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  return -1;
}

TEST(CpuGemm, OpenBlasIsAlwaysAvailableAndTheDefaultIsAvailable) {
  auto all = available_cpu_gemms();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front(), CpuGemm::openblas);
  EXPECT_NE(std::find(all.begin(), all.end(), default_cpu_gemm()), all.end());
  EXPECT_STREQ(cpu_gemm_name(CpuGemm::openblas), "openblas");
  EXPECT_STREQ(cpu_gemm_name(CpuGemm::onednn), "onednn");
}

TEST(CpuGemm, OneDnnIsTheDefaultWhenBuiltAndNamesItsInstructionSet) {
  if (!have_onednn()) {
    EXPECT_EQ(default_cpu_gemm(), CpuGemm::openblas);
    EXPECT_EQ(onednn_cpu_isa(), "none");
    return;
  }
  EXPECT_EQ(default_cpu_gemm(), CpuGemm::onednn);
  // Any x86-64 CPU troupe runs on has at least AVX2; oneDNN names what it dispatches to.
  const std::string isa = onednn_cpu_isa();
  EXPECT_TRUE(isa.rfind("avx", 0) == 0 || isa == "sse41") << isa;
}

TEST(CpuGemm, RegistryForAMissingLibraryIsRefusedByName) {
  if (have_onednn()) {
    EXPECT_NO_THROW(make_cpu_registry(CpuGemm::onednn));
    return;
  }
  EXPECT_TROUPE_ERROR(make_cpu_registry(CpuGemm::onednn), Code::unavailable,
                      "float32 GEMM 'onednn' is not in this build");
}

TEST(CpuGemm, OneDnnRefusalNamesItsStatus) {
  float a = 1, b = 1, c = 0;
  MatmulArgs x;
  x.m = x.n = x.k = 1;
  x.a = &a;
  x.b = &b;
  x.c = &c;
  if (!have_onednn()) {
    EXPECT_TROUPE_ERROR(cpu::onednn_sgemm(x, 1, 1, 1), Code::unavailable, "built without oneDNN");
    return;
  }
  // A leading dimension of 0 is below the row length oneDNN requires.
  EXPECT_TROUPE_ERROR(cpu::onednn_sgemm(x, 0, 1, 1), Code::internal,
                      "matmul: dnnl_sgemm failed (invalid arguments) for m=1 n=1 k=1");
}

struct GemmCase {
  int64_t m, k, n;
};

class OneDnnAgainstOpenBlas : public ::testing::TestWithParam<GemmCase> {
 protected:
  void SetUp() override {
    if (!have_onednn()) GTEST_SKIP() << "this build has no oneDNN";
  }
};

TEST_P(OneDnnAgainstOpenBlas, EveryTransposeAndAlphaBetaAgreeWithinFloatTolerance) {
  auto [m, k, n] = GetParam();
  KernelRegistry blas_registry = make_cpu_registry(CpuGemm::openblas);
  KernelRegistry dnnl_registry = make_cpu_registry(CpuGemm::onednn);
  Ops blas(blas_registry), dnnl(dnnl_registry);
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      Tensor a = Tensor::random_uniform(ta ? Shape{k, m} : Shape{m, k}, 21, -1, 1);
      Tensor b = Tensor::random_uniform(tb ? Shape{n, k} : Shape{k, n}, 22, -1, 1);
      Tensor c = Tensor::random_uniform({m, n}, 23, -1, 1);
      for (auto [alpha, beta] : {std::pair{1.0, 0.0}, std::pair{0.5, -2.0}, std::pair{-1.25, 1.0},
                                 std::pair{0.0, 0.75}}) {
        SCOPED_TRACE(::testing::Message()
                     << "ta=" << ta << " tb=" << tb << " alpha=" << alpha << " beta=" << beta);
        Tensor expected = c.clone(), got = c.clone();
        blas.matmul(a, b, expected, ta, tb, alpha, beta);
        dnnl.matmul(a, b, got, ta, tb, alpha, beta);
        // Both sum k float products in their own order: differences grow with k.
        testing::expect_all_near(testing::as_doubles(expected), got, 2e-6 * double(k + 1));
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, OneDnnAgainstOpenBlas,
                         ::testing::Values(GemmCase{1, 1, 1}, GemmCase{1, 7, 1}, GemmCase{3, 5, 7},
                                           GemmCase{17, 33, 65}, GemmCase{65, 1, 3},
                                           GemmCase{129, 257, 11}, GemmCase{128, 784, 256},
                                           GemmCase{256, 128, 10}, GemmCase{0, 4, 3},
                                           GemmCase{3, 0, 4}),
                         [](const auto& info) {
                           return "m" + std::to_string(info.param.m) + "_k" +
                                  std::to_string(info.param.k) + "_n" +
                                  std::to_string(info.param.n);
                         });

// oneDNN's OpenMP would start a worker per core on the first call from a thread whose OpenMP
// setting is the default (here: the test's main thread); the kernel keeps it to the caller.
TEST(CpuGemm, OneDnnMatmulStartsNoThreads) {
  if (!have_onednn()) GTEST_SKIP() << "this build has no oneDNN";
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one core: OpenMP would not fork";
  KernelRegistry registry = make_cpu_registry(CpuGemm::onednn);
  Ops ops(registry);
  Tensor a = Tensor::random_uniform({256, 784}, 1, -1, 1);
  Tensor b = Tensor::random_uniform({784, 256}, 2, -1, 1);
  Tensor c(DType::float32, {256, 256});
  const int before = thread_count();
  ASSERT_GT(before, 0);
  for (int i = 0; i < 3; ++i) ops.matmul(a, b, c);
  std::thread other([&] { ops.matmul(a, b, c, false, false, 1.0, 1.0); });
  other.join();
  // A joined thread can still count in /proc for a moment (its exit wakes the joiner before the
  // kernel releases the task: 2 runs in 30 saw one thread too many here). Wait for the count to
  // settle; an OpenMP worker would stay, and the test would still fail on it.
  int after = thread_count();
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
       after != before && std::chrono::steady_clock::now() < deadline; after = thread_count())
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(after, before);
}

}  // namespace
}  // namespace troupe
