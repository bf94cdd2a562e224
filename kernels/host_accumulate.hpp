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

}  // namespace troupe
