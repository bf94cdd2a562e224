#pragma once
// Comparison files for the compare tests: a small MLP base plus a compare section.
#include <string>

namespace troupe::testing {

/// A small MLP base over two CPU replicas (one step per strategy.run, logs every 5 steps),
/// followed by `compare` (the compare section's text, starting with "compare:").
inline std::string comparison(const std::string& compare) {
  return "name: cmp\n"
         "seed: 3\n"
         "strategy: {kind: mirrored, devices: [CPU:0, CPU:1], cross_device_ops: {kind: ring}}\n"
         "model: {kind: mlp, input_dim: 16, hidden: [32], classes: 4}\n"
         "data: {kind: synthetic_classification, examples: 2048, global_batch: 32}\n"
         "optimizer: {kind: sgd, learning_rate: 0.1}\n"
         "train: {steps: 20, log_every: 5, steps_per_execution: 1}\n" +
         compare;
}

}  // namespace troupe::testing
