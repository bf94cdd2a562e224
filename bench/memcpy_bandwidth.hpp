#pragma once
// The machine's memory-copy bandwidth: the ceiling for anything that moves tensor bytes.

#include <cstddef>

namespace troupe {

/// Best-of-`reps` memcpy bandwidth in GB/s (1e9 bytes/s) for a `bytes`-sized copy.
double measure_memcpy_gbps(size_t bytes, int reps);

}  // namespace troupe
