#pragma once
// dst += src over host memory, as a plain function pointer: the ReduceFn that the collective
// state machines of core/collective take (they cannot see the registry, which is a layer above).

#include <cstdint>

#include "core/dtype.hpp"

namespace troupe {

/// dst[i] += src[i] for i < count elements of `dtype` (host memory; vectorised loop).
void host_accumulate(void* dst, const void* src, DType dtype, int64_t count);

/// dst[i] = a[i] + b[i] (the collectives' ReduceIntoFn): one pass, no copy first. dst may be
/// exactly a or exactly b, then it is an accumulate.
void host_add_into(void* dst, const void* a, const void* b, DType dtype, int64_t count);

/// host_add_into that also says whether every sum is finite (no NaN or infinity; always true
/// for integer dtypes), in the same pass: the check costs no second read of dst (the
/// collectives' ReduceIntoFiniteFn, for train.on_nan's decision).
bool host_add_into_finite(void* dst, const void* a, const void* b, DType dtype, int64_t count);

/// host_add_into_finite writing dst with non-temporal (streaming) stores where the CPU has
/// AVX2 or AVX-512: for results larger than the cache, whose lines would be evicted before
/// anyone reads them, it saves the read-for-ownership of every written line (a quarter of a
/// 2-input sum's memory traffic). Same sums, same bits; stores are fenced before it returns, so
/// a release that follows publishes them. dst aliasing a or b takes the cached path.
bool host_add_into_finite_streaming(void* dst, const void* a, const void* b, DType dtype,
                                    int64_t count);

/// The vector width host_add_into_finite_streaming uses: the widest the CPU runs, or one named
/// (tests run each path the machine has; a path the CPU lacks falls back to the next narrower).
enum class StreamingIsa { widest, avx512, avx2, none };
bool host_add_into_finite_streaming_with(StreamingIsa isa, void* dst, const void* a, const void* b,
                                         DType dtype, int64_t count);
/// Whether this CPU runs `isa`'s streaming path (none: always).
bool cpu_runs_streaming_isa(StreamingIsa isa);

/// Results of at least this many bytes are worth streaming: the last-level cache's size
/// (sysconf), 32 MiB where the system does not say.
int64_t streaming_store_min_bytes();

}  // namespace troupe
