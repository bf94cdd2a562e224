#include "experiment/compare/variant_metrics.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "core/json.hpp"
#include "core/status.hpp"

namespace troupe::experiment {
namespace {

std::string format_number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// `v` as metrics.csv holds it (ProgressReporter prints the loss with %.9g and rates with %.6g):
// the rule is decided on the same numbers whether it reads a live run or the file afterwards.
double as_logged(double v, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*g", digits, v);
  return std::strtod(text, nullptr);
}

// The byte count in a span name like "all_reduce 814120 bytes" (0 when it has none).
double bytes_in(const std::string& name) {
  const size_t space = name.find(' ');
  return space == std::string::npos ? 0 : std::strtod(name.c_str() + space + 1, nullptr);
}

}  // namespace

std::vector<MetricRow> read_metrics_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw not_found("cannot read metrics file " + path);
  std::vector<MetricRow> rows;
  std::string line;
  int line_number = 0;
  double seconds = 0;
  int64_t last_step = 0;
  while (std::getline(in, line)) {
    // A row without its newline is still being written (a live run's file): not a row yet.
    if (in.eof()) break;
    ++line_number;
    if (line_number == 1) continue;  // the header
    if (line.empty()) continue;
    MetricRow row;
    char* end = nullptr;
    const char* p = line.c_str();
    auto next = [&](double& out) {
      out = std::strtod(p, &end);
      if (end == p || (*end != ',' && *end != '\0'))
        throw data_loss(path + ":" + std::to_string(line_number) + ": malformed row \"" + line +
                        "\"");
      p = *end == ',' ? end + 1 : end;
    };
    double step = 0;
    next(step);
    next(row.loss);
    next(row.accuracy);
    next(row.steps_per_s);
    next(row.examples_per_s);
    row.step = int64_t(step);
    if (row.steps_per_s > 0) seconds += double(row.step - last_step) / row.steps_per_s;
    last_step = row.step;
    row.train_seconds = seconds;
    rows.push_back(row);
  }
  return rows;
}

StepBreakdown read_step_breakdown(const std::string& timeline_path) {
  std::ifstream in(timeline_path);
  if (!in) throw not_found("cannot read timeline " + timeline_path);
  std::ostringstream text;
  text << in.rdbuf();
  Json trace = Json::parse(text.str());
  const Json* events = trace.find("traceEvents");
  if (!events || !events->is_array())
    throw data_loss("timeline " + timeline_path + " has no traceEvents list");
  double input_us = 0, chunk_us = 0, communication_us = 0, barrier_us = 0, bytes = 0;
  double worker_input_us = 0, parameter_us = 0;  // parameter-server steps (category "ps")
  std::map<int64_t, double> replica_us;          // per replica track
  int64_t replica_spans = 0;
  for (const Json& event : events->items()) {
    const Json* category = event.find("cat");
    const Json* duration = event.find("dur");
    const Json* name = event.find("name");
    if (!category || !duration || !duration->is_number() || !name) continue;
    const double dur = duration->as_double();
    const std::string& cat = category->text();
    if (cat == "input") input_us += dur;
    if (cat == "step") chunk_us += dur;
    if (cat == "replica") {
      const Json* track = event.find("tid");
      replica_us[track ? track->as_int() : 0] += dur;
      ++replica_spans;
    }
    const std::string& text = name->text();
    if (cat == "collective") {
      // "all_reduce 814120 bytes", "merge_call 8 bytes" (experiment_runner's observer).
      (text.rfind("merge_call", 0) == 0 ? barrier_us : communication_us) += dur;
      bytes += bytes_in(text);
    }
    if (cat == "ps") {
      // "input", "token", "pull 3200 bytes", "push 96 bytes", "offer 96 bytes"
      // (ps_experiment_runner's observer).
      if (text.rfind("input", 0) == 0) worker_input_us += dur;
      if (text.rfind("pull", 0) == 0 || text.rfind("token", 0) == 0) parameter_us += dur;
      if (text.rfind("push", 0) == 0 || text.rfind("offer", 0) == 0) communication_us += dur;
      bytes += bytes_in(text);
    }
  }
  StepBreakdown b;
  if (replica_us.empty()) return b;
  const double replicas = double(replica_us.size());
  b.steps = replica_spans / int64_t(replica_us.size());
  if (b.steps == 0) return b;
  double busy_us = 0;
  for (const auto& [track, us] : replica_us) busy_us += us;
  const double per_step = 1.0 / double(b.steps) / 1000 / replicas;  // us per replica -> ms/step
  b.communication_ms = communication_us * per_step;
  b.barrier_ms = barrier_us * per_step;
  b.parameter_wait_ms = parameter_us * per_step;
  const double worker_input_ms = worker_input_us * per_step;
  b.compute_ms = std::max(0.0, busy_us * per_step - b.communication_ms - b.barrier_ms -
                                   b.parameter_wait_ms - worker_input_ms);
  // The coordinator's input precedes the replicas' step; a ps worker's is part of it.
  b.input_ms = input_us / double(b.steps) / 1000 + worker_input_ms;
  b.step_ms = chunk_us / double(b.steps) / 1000;
  b.wait_ms = std::max(0.0, b.step_ms - busy_us * per_step);
  b.bytes_per_step = bytes / replicas / double(b.steps);
  return b;
}

bool StopRuleTracker::add(int64_t step, double loss, double steps_per_s) {
  if (!reason_.empty()) return true;
  loss = as_logged(loss, 9);
  steps_per_s = as_logged(steps_per_s, 6);
  if (steps_per_s > 0) seconds_ += double(step - last_step_) / steps_per_s;
  last_step_ = step;
  const std::string at = " reached at step " + std::to_string(step);
  if (rule_.has_target_loss() && loss <= rule_.target_loss)
    reason_ = "target loss " + format_number(rule_.target_loss) + at;
  else if (rule_.wall_seconds > 0 && seconds_ >= rule_.wall_seconds)
    reason_ = "wall time " + format_number(rule_.wall_seconds) + " s" + at;
  return !reason_.empty();
}

}  // namespace troupe::experiment
