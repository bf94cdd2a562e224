#include "experiment/compare/compare_report.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "experiment/compare/compare_runner.hpp"
#include "experiment/json_writer.hpp"
#include "experiment/plan.hpp"
#include "experiment/report/charts.hpp"
#include "experiment/report/png_encoder.hpp"

namespace fs = std::filesystem;

namespace troupe::experiment {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string fixed(double v, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) throw unavailable("cannot write " + path);
}

std::string table_csv(const std::vector<VariantSummary>& vs) {
  std::string csv =
      "variant,workers,replicas,steps,examples_per_s,time_to_target_s,final_loss,final_accuracy,"
      "bytes_per_step,input_ms,compute_ms,communication_ms,barrier_ms,parameter_wait_ms,wait_ms,"
      "step_ms,stopped\n";
  for (const auto& v : vs) {
    const int64_t steps = v.rows.empty() ? 0 : v.rows.back().step;
    char line[512];
    std::snprintf(line, sizeof line,
                  "%s,%d,%d,%lld,%.9g,%.9g,%.9g,%.9g,%.9g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,",
                  v.name.c_str(), v.workers, v.replicas, static_cast<long long>(steps),
                  v.examples_per_s, v.time_to_target, v.final_loss, v.final_accuracy,
                  v.breakdown.bytes_per_step, v.breakdown.input_ms, v.breakdown.compute_ms,
                  v.breakdown.communication_ms, v.breakdown.barrier_ms,
                  v.breakdown.parameter_wait_ms, v.breakdown.wait_ms, v.breakdown.step_ms);
    csv += line + ("\"" + v.stop_reason + "\"\n");
  }
  return csv;
}

std::string metrics_csv(const std::vector<VariantSummary>& vs) {
  std::string csv = "variant,step,train_seconds,loss,accuracy,steps_per_s,examples_per_s\n";
  for (const auto& v : vs)
    for (const auto& r : v.rows) {
      char line[256];
      std::snprintf(line, sizeof line, ",%lld,%.9g,%.9g,%.9g,%.9g,%.9g\n",
                    static_cast<long long>(r.step), r.train_seconds, r.loss, r.accuracy,
                    r.steps_per_s, r.examples_per_s);
      csv += v.name + line;
    }
  return csv;
}

std::string metrics_json(const std::vector<VariantSummary>& vs, const CompareSpec& spec) {
  JsonWriter json;
  json.begin_object().key("comparison").string(spec.name).key("variants").begin_array();
  for (const auto& v : vs) {
    json.begin_object().key("name").string(v.name).key("stopped").string(v.stop_reason);
    json.key("workers").integer(v.workers).key("replicas").integer(v.replicas);
    json.key("examples_per_s").number(v.examples_per_s);
    json.key("time_to_target_s").number(v.time_to_target);
    json.key("final_loss").number(v.final_loss).key("final_accuracy").number(v.final_accuracy);
    json.key("num_ps").integer(v.num_ps);
    json.key("bytes_per_step").number(v.breakdown.bytes_per_step);
    json.key("step_ms").begin_object();
    json.key("input").number(v.breakdown.input_ms).key("compute").number(v.breakdown.compute_ms);
    json.key("communication").number(v.breakdown.communication_ms);
    json.key("barrier").number(v.breakdown.barrier_ms);
    json.key("parameter_wait").number(v.breakdown.parameter_wait_ms);
    json.key("wait").number(v.breakdown.wait_ms).key("step").number(v.breakdown.step_ms);
    json.end_object().key("metrics").begin_array();
    for (const auto& r : v.rows) {
      json.begin_object().key("step").integer(r.step).key("train_seconds").number(r.train_seconds);
      json.key("loss").number(r.loss).key("accuracy").number(r.accuracy);
      json.key("steps_per_s").number(r.steps_per_s).key("examples_per_s").number(r.examples_per_s);
      json.end_object();
    }
    json.end_array().end_object();
  }
  json.end_array().end_object();
  return json.str() + "\n";
}

void write_plots(const std::vector<VariantSummary>& vs, const std::string& dir) {
  std::vector<report::Series> by_time, by_step;
  std::vector<std::pair<std::string, double>> throughput;
  std::vector<std::string> names;
  std::vector<std::vector<double>> parts;
  for (const auto& v : vs) {
    report::Series t{v.name, {}}, s{v.name, {}};
    for (const auto& r : v.rows) {
      t.points.emplace_back(r.train_seconds, r.loss);
      s.points.emplace_back(double(r.step), r.loss);
    }
    by_time.push_back(std::move(t));
    by_step.push_back(std::move(s));
    throughput.emplace_back(v.name, v.examples_per_s);
    names.push_back(v.name);
    parts.push_back({v.breakdown.input_ms, v.breakdown.compute_ms, v.breakdown.communication_ms,
                     v.breakdown.barrier_ms, v.breakdown.parameter_wait_ms, v.breakdown.wait_ms});
  }
  report::write_png(report::line_chart(by_time, {"LOSS VS TRAINING TIME", "seconds", "loss"}),
                    dir + "/loss_vs_time.png");
  report::write_png(report::line_chart(by_step, {"LOSS VS STEP", "step", "loss"}),
                    dir + "/loss_vs_step.png");
  report::write_png(report::bar_chart(throughput, {"THROUGHPUT", "", "examples/s"}),
                    dir + "/throughput.png");
  report::write_png(
      report::stacked_bar_chart(
          names, {"input", "compute", "communication", "merge_call", "parameters", "wait"}, parts,
          {"WHERE A STEP'S TIME GOES", "", "ms per step"}),
      dir + "/step_breakdown.png");
}

std::string report_page(const CompareSpec& spec, const std::vector<VariantSummary>& vs,
                        const std::string& out_dir) {
  std::string md = "# Comparison: " + spec.name + "\n\nStopping rule:";
  if (spec.stop.steps > 0) md += " " + std::to_string(spec.stop.steps) + " steps;";
  if (spec.stop.wall_seconds > 0) md += " " + fixed(spec.stop.wall_seconds, 1) + " s of training;";
  if (spec.stop.has_target_loss()) md += " target loss " + fixed(spec.stop.target_loss, 4) + ";";
  md += " the same seed for every variant.\n\n";
  md +=
      "| variant | workers x replicas | steps | examples/s | time to target (s) | final loss | "
      "final accuracy | bytes/step/replica | input | compute | communication | merge_call | "
      "waiting for parameters | wait | step (ms) | stopped |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& v : vs) {
    const int64_t steps = v.rows.empty() ? 0 : v.rows.back().step;
    const StepBreakdown& b = v.breakdown;
    md += "| " + v.name + " | " + std::to_string(v.workers) + " x " +
          std::to_string(v.replicas / std::max(1, v.workers)) +
          (v.num_ps > 0 ? " + " + std::to_string(v.num_ps) + " ps" : std::string()) + " | " +
          std::to_string(steps) + " | " + fixed(v.examples_per_s, 0) + " | " +
          (v.time_to_target >= 0 ? fixed(v.time_to_target, 2) : std::string("not reached")) +
          " | " + fixed(v.final_loss, 4) + " | " +
          (v.final_accuracy >= 0 ? fixed(100 * v.final_accuracy, 2) + "%" : std::string("-")) +
          " | " + fixed(b.bytes_per_step, 0) + " | " + fixed(b.input_ms, 3) + " | " +
          fixed(b.compute_ms, 3) + " | " + fixed(b.communication_ms, 3) + " | " +
          fixed(b.barrier_ms, 3) + " | " + fixed(b.parameter_wait_ms, 3) + " | " +
          fixed(b.wait_ms, 3) + " | " + fixed(b.step_ms, 3) + " | " + v.stop_reason + " |\n";
  }
  md +=
      "\nInput to step: milliseconds per step (docs/compare.md says what each measures); "
      "examples/s and time to target count training time only.\n";
  md +=
      "\n![loss vs training time](plots/loss_vs_time.png)\n\n"
      "![loss vs step](plots/loss_vs_step.png)\n\n"
      "![throughput](plots/throughput.png)\n\n"
      "![step time breakdown](plots/step_breakdown.png)\n\n"
      "Every variant's metrics over time: `metrics.csv`, `metrics.json`; the table: "
      "`summary.csv`. TensorBoard, every variant side by side: `tensorboard --logdir " +
      (fs::path(out_dir) / "runs").string() + "`.\n";
  return md;
}

}  // namespace

VariantSummary summarize_variant(const CompareSpec& spec, size_t index,
                                 const std::string& out_dir) {
  const CompareVariant& variant = spec.variants.at(index);
  const std::string dir = variant_run_dir(out_dir, variant.name);
  VariantSummary v;
  v.name = variant.name;
  v.stop_reason = read_text(variant_done_file(out_dir, variant.name));
  v.workers = variant.workers;
  if (variant.experiment.strategy().kind() == "parameter_server") {
    // In-process workers, one replica each, and the shards they pull from.
    const auto& ps = variant.experiment.strategy().parameter_server();
    v.workers = v.replicas = int(ps.workers());
    v.num_ps = int(ps.num_ps());
  } else {
    const ExperimentPlan plan = make_plan(variant.experiment);
    v.replicas = int(plan.replicas.size()) * variant.workers;
  }
  v.global_batch = variant.experiment.data().global_batch();
  // Cut where the rule triggered: a launched cluster may log once more before it stops.
  StopRuleTracker tracker(spec.stop);
  for (const MetricRow& row : read_metrics_csv(dir + "/metrics.csv")) {
    v.rows.push_back(row);
    if (tracker.add(row.step, row.loss, row.steps_per_s)) break;
  }
  if (fs::exists(dir + "/timeline.json")) v.breakdown = read_step_breakdown(dir + "/timeline.json");
  if (!v.rows.empty()) {
    const MetricRow& last = v.rows.back();
    v.final_loss = last.loss;
    v.final_accuracy = last.accuracy;
    if (last.train_seconds > 0)
      v.examples_per_s = double(last.step) * double(v.global_batch) / last.train_seconds;
  }
  if (spec.stop.has_target_loss())
    for (const MetricRow& row : v.rows)
      if (row.loss <= spec.stop.target_loss) {
        v.time_to_target = row.train_seconds;
        break;
      }
  return v;
}

std::string write_compare_report(const CompareSpec& spec, const std::string& out_dir) {
  std::vector<VariantSummary> vs;
  for (size_t i = 0; i < spec.variants.size(); ++i)
    vs.push_back(summarize_variant(spec, i, out_dir));
  fs::create_directories(fs::path(out_dir) / "plots");
  write_plots(vs, (fs::path(out_dir) / "plots").string());
  write_file((fs::path(out_dir) / "summary.csv").string(), table_csv(vs));
  write_file((fs::path(out_dir) / "metrics.csv").string(), metrics_csv(vs));
  write_file((fs::path(out_dir) / "metrics.json").string(), metrics_json(vs, spec));
  const std::string page = (fs::path(out_dir) / "report.md").string();
  write_file(page, report_page(spec, vs, out_dir));
  return page;
}

}  // namespace troupe::experiment
