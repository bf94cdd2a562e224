#pragma once
// Comparison files: an experiment file with a `compare:` section that lists variants, each the
// base experiment with some of its keys overridden, and one stopping rule for all of them.
// `troupe compare FILE` runs every variant with the same seed (same initial weights, same data
// order) and writes one report (docs/compare.md). Every variant is parsed as a whole experiment
// before anything runs, so a bad override reads like the same mistake in a plain experiment:
//   exp.yaml:21:40: variant "hier" (compare.variants[1]): strategy.cross_device_ops.kind: ...

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "messages/proto/experiment.pb.h"

namespace troupe {
class ModelRegistry;
}

namespace troupe::experiment {

/// When every variant stops: the first of the rules that are set to trigger (train.steps of the
/// variant bounds a run that no rule stops).
struct StopRule {
  int64_t steps = 0;        ///< > 0: train exactly this many steps (replaces train.steps)
  double wall_seconds = 0;  ///< > 0: stop at the first log after this much training time
  double target_loss = -1;  ///< >= 0: stop at the first logged loss at or below it
  bool has_target_loss() const { return target_loss >= 0; }
};

/// One variant: its name (its run directory under the comparison's output) and the experiment
/// it runs.
struct CompareVariant {
  std::string name;
  int workers = 1;  ///< > 1: that many local processes through `troupe launch` (multi-worker)
  proto::Experiment experiment;
};

/// A parsed comparison.
struct CompareSpec {
  std::string name;  ///< the base experiment's name
  std::string yaml;  ///< the file's text (each variant is rebuilt from it to run elsewhere)
  StopRule stop;
  std::vector<CompareVariant> variants;
};

/// Parses a comparison; `source_name` is how errors name it. Throws invalid_argument naming the
/// file, line:column, the variant and the key for: a missing or malformed `compare:` section, an
/// unknown key in it or in a variant, an override the experiment parser refuses (unknown key,
/// a kind this build lacks, NCCL on CPU replicas, ...), a variant that cannot run here, a
/// stopping rule that can never trigger.
CompareSpec parse_compare(std::string_view yaml_text, const std::string& source_name,
                          const ModelRegistry* registry = nullptr);

/// Reads and parses a comparison file; relative data.files resolve against its directory.
CompareSpec load_compare(const std::string& path, const ModelRegistry* registry = nullptr);

/// The YAML of one variant as a plain experiment file (the base with its overrides, without the
/// compare section): what `troupe launch` runs for a multi-worker variant.
std::string variant_experiment_yaml(const CompareSpec& spec, size_t variant_index);

}  // namespace troupe::experiment
