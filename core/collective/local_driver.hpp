#pragma once
// Runs one collective across N algorithm instances in one thread by routing their messages
// through a queue: the reference transport for tests and benchmarks. In random mode it starts
// ranks at random moments and delivers a random ready message each time (seeded), which
// exercises early messages and arbitrary interleavings across peers.

#include <cstdint>
#include <memory>
#include <vector>

#include "core/collective/collective_algorithm.hpp"

namespace troupe {

/// How the driver orders starts and deliveries.
struct LocalDriverOptions {
  bool random_order = false;  ///< false: start all ranks, then deliver FIFO
  uint64_t seed = 0;          ///< Philox seed for random_order
};

/// What a run did, for tests and benchmarks.
struct LocalDriverStats {
  int64_t messages = 0;        ///< messages delivered
  int64_t payload_bytes = 0;   ///< sum of payload sizes
  int64_t early_messages = 0;  ///< messages delivered to a rank before its start()
};

/// Starts peers[r] with inputs[r], routes every message until all are done and returns each
/// rank's result. Throws whatever a peer throws, and internal_error naming the unfinished ranks
/// if the messages run out first.
std::vector<Tensor> run_locally(std::vector<std::unique_ptr<CollectiveAlgorithm>>& peers,
                                const std::vector<Tensor>& inputs,
                                const LocalDriverOptions& options = {},
                                LocalDriverStats* stats = nullptr);

}  // namespace troupe
