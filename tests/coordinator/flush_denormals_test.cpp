// StrategyOptions::flush_denormals: every replica thread runs its kernels with subnormal floats
// flushed to zero when on (TensorFlow's CPU threads do the same) and with IEEE gradual underflow
// when off, whatever mode the thread that built the strategy is in.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "core/float_mode.hpp"
#include "kernels/ops.hpp"
#include "tests/coordinator/fixture.hpp"

namespace troupe::testing {
namespace {

class FlushDenormals_ : public StrategyTest {
 protected:
  struct ReplicaView {
    bool flushes = false;
    /// The bits of 1e-20 * 1e-20 computed by the matmul kernel on the replica's thread. Bits,
    /// not a float: this thread may treat a subnormal as zero in any comparison (DAZ).
    uint32_t product_bits = 0xffffffffu;
  };

  // Runs one step on `replicas` replicas and reports what each replica thread saw.
  std::vector<ReplicaView> run_step(int replicas, bool flush_denormals) {
    MirroredOptions options;
    options.timeouts.flush_denormals = flush_denormals;
    MirroredStrategy s(runtime.system(), cpus(replicas), options);
    Ops ops(*s.kernels());
    auto outputs = s.run([&](ReplicaContext&, const std::vector<Tensor>&) {
      Tensor a = Tensor::from_vector<float>({1, 1}, {1e-20f});
      Tensor out = Tensor::from_vector<float>({1, 1}, {-1.0f});
      ops.matmul(a, a, out);
      return std::vector<Tensor>{scalar(flush_denormals_enabled() ? 1.0f : 0.0f), out};
    });
    std::vector<ReplicaView> views(static_cast<size_t>(replicas));
    for (int r = 0; r < replicas; ++r) {
      views[size_t(r)].flushes = outputs.at(0).values().at(size_t(r)).scalar<float>() == 1.0f;
      std::memcpy(&views[size_t(r)].product_bits,
                  outputs.at(1).values().at(size_t(r)).data<float>(), sizeof(uint32_t));
    }
    return views;
  }
};

TEST_F(FlushDenormals_, ReplicaThreadsFlushSubnormalProductsToZeroWhenOn) {
  // The building thread keeps gradual underflow: the replicas' mode is their own.
  ScopedFlushDenormals caller(false);
  for (const auto& view : run_step(2, true)) {
    EXPECT_TRUE(view.flushes);
    EXPECT_EQ(view.product_bits, 0u);  // +0.0f
  }
}

TEST_F(FlushDenormals_, ReplicaThreadsKeepSubnormalProductsWhenOff) {
  ScopedFlushDenormals caller(true);
  for (const auto& view : run_step(2, false)) {
    EXPECT_FALSE(view.flushes);
    // A positive subnormal (1e-40): exponent field 0, mantissa not 0, sign 0.
    EXPECT_EQ(view.product_bits & 0xff800000u, 0u) << std::hex << view.product_bits;
    EXPECT_NE(view.product_bits, 0u);
  }
}

TEST_F(FlushDenormals_, OnIsTheDefault) {
  EXPECT_TRUE(StrategyOptions{}.flush_denormals);
  EXPECT_TRUE(MirroredOptions{}.timeouts.flush_denormals);
}

TEST(FloatMode, ScopedModeIsRestored) {
  set_flush_denormals(false);
  {
    ScopedFlushDenormals on(true);
    EXPECT_TRUE(flush_denormals_enabled());
    {
      ScopedFlushDenormals off(false);
      EXPECT_FALSE(flush_denormals_enabled());
    }
    EXPECT_TRUE(flush_denormals_enabled());
  }
  EXPECT_FALSE(flush_denormals_enabled());
}

}  // namespace
}  // namespace troupe::testing
