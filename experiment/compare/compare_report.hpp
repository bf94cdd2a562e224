#pragma once
// The report of a comparison, computed only from the files each variant's run wrote (so a test
// can check it against them): report.md with the table and the plots, summary.csv (the table),
// metrics.csv and metrics.json (every variant's metrics over time) and plots/*.png.

#include <string>
#include <vector>

#include "experiment/compare/compare_spec.hpp"
#include "experiment/compare/variant_metrics.hpp"

namespace troupe::experiment {

/// One row of the report's table.
struct VariantSummary {
  std::string name;
  std::string stop_reason;  ///< what compare_done says
  int workers = 1;
  int replicas = 1;  ///< over all workers
  int num_ps = 0;    ///< parameter-server variants: the ps tasks
  int64_t global_batch = 0;
  /// metrics.csv's rows up to the step at which the stopping rule triggered.
  std::vector<MetricRow> rows;
  StepBreakdown breakdown;     ///< zero when the run wrote no timeline
  double examples_per_s = 0;   ///< last row's step * global_batch / its train_seconds
  double time_to_target = -1;  ///< train_seconds of the first row at or below target_loss
  double final_loss = 0, final_accuracy = -1;
};

/// Reads variant `index`'s run directory under `out_dir`.
VariantSummary summarize_variant(const CompareSpec& spec, size_t index, const std::string& out_dir);

/// Writes every report file; returns the path of report.md.
std::string write_compare_report(const CompareSpec& spec, const std::string& out_dir);

}  // namespace troupe::experiment
