// A float32 matmul on a replica thread whose group has an idle replica (core/work_share.hpp)
// gives the bits of the whole call, for every GEMM library of the build, every transpose, alpha
// and beta: a shape is cut only where the library's row blocks reproduce the whole call on this
// CPU (kernels/cpu/matmul.cpp probes it). That is what lets a replica decide from timing alone
// whether to cut. CTest runs this test a second time with oneDNN held to AVX2
// (DNNL_MAX_CPU_ISA), whose kernels reproduce few shapes: the probe must refuse those.
// Which shapes a library reproduces depends on its kernels for this CPU (OpenBLAS's SkylakeX
// kernels: all of these; its Haswell and Zen kernels: few), so the test asks the probe.

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>

#include "core/work_share.hpp"
#include "kernels/cpu_gemm.hpp"
#include "kernels/ops.hpp"
#include "kernels/registry.hpp"
#include "tests/common/idle_member.hpp"

namespace troupe {
namespace {

struct Case {
  int64_t m, k, n;
  bool ta, tb;
};

Tensor product(const Ops& ops, const Case& c, double beta) {
  Tensor a = Tensor::random_uniform(c.ta ? Shape{c.k, c.m} : Shape{c.m, c.k}, 21, -1, 1);
  Tensor b = Tensor::random_uniform(c.tb ? Shape{c.n, c.k} : Shape{c.k, c.n}, 22, -1, 1);
  Tensor out = Tensor::random_uniform({c.m, c.n}, 23, -1, 1);
  ops.matmul(a, b, out, c.ta, c.tb, 0.75, beta);
  return out;
}

using testing::IdleMember;

TEST(SharedGemm, AMatmulWithAnIdleReplicaGivesTheWholeCallsBits) {
  WorkShare share(2);
  if (!share.sharing()) GTEST_SKIP() << "fewer than 2 usable cores";
  IdleMember idle(share);
  // The MLP's two large GEMMs at batch 128 and 256, a ragged cut, every transpose.
  const Case cases[] = {{128, 784, 256, false, false}, {784, 128, 256, true, false},
                        {256, 784, 256, false, false}, {300, 100, 277, false, true},
                        {333, 257, 129, true, true},   {97, 1000, 130, false, false}};
  for (CpuGemm gemm : available_cpu_gemms()) {
    KernelRegistry registry = make_cpu_registry(gemm);
    Ops ops(registry);
    for (const Case& c : cases)
      for (double beta : {0.0, 1.0}) {
        SCOPED_TRACE(::testing::Message()
                     << cpu_gemm_name(gemm) << " m=" << c.m << " k=" << c.k << " n=" << c.n
                     << " ta=" << c.ta << " tb=" << c.tb << " beta=" << beta);
        const Tensor whole = product(ops, c, beta);  // no share on this thread yet
        WorkShare::Member member(share, 0);
        const int64_t helped_before = share.helped_blocks();
        // A shape the library reproduces in blocks is shared (until the idle replica took a
        // block); one it does not (oneDNN's AVX2 kernels, OpenBLAS's Haswell ones: most
        // shapes) never is, and the bits are the whole call's either way.
        const bool exact = cpu_gemm_row_blocks_exact(gemm, c.m, c.n, c.k, c.ta, c.tb, 0.75, beta);
        // The idle replica's thread must be scheduled while a call runs to take a block: on a
        // loaded machine (the whole suite on two cores) that can take many calls, so a shape
        // that is cut gets calls until it was helped, for up to 30 s.
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        for (int attempt = 0; share.helped_blocks() == helped_before &&
                              (exact ? std::chrono::steady_clock::now() < until : attempt < 5);
             ++attempt) {
          const Tensor shared = product(ops, c, beta);
          ASSERT_EQ(std::memcmp(shared.raw_data(), whole.raw_data(), size_t(c.m * c.n) * 4), 0);
        }
        EXPECT_EQ(share.helped_blocks() > helped_before, exact)
            << (exact ? "the idle replica never took a block" : "a refused shape was cut");
      }
  }
}

}  // namespace
}  // namespace troupe
