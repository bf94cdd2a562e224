// Parameter-server variants in a comparison: async and sync on the embedding model over
// in-memory synthetic ratings. The report's bytes and waiting-for-parameters columns are the
// variants' own timelines; one-worker variants are deterministic, so identical settings give
// identical curves. (Two async workers race for the shards, and two sync workers race for the
// tokens and their data shards' turns: their curves are not reproducible bit for bit.)
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "coordinator/runtime.hpp"
#include "core/json.hpp"
#include "experiment/compare/compare_report.hpp"
#include "experiment/compare/compare_runner.hpp"

namespace troupe::experiment {
namespace {

namespace fs = std::filesystem;

// 2 ps tasks, the 20x4 and 10x4 tables in two parts each, global batch 16.
std::string ps_comparison(const std::string& variants) {
  return "name: cmp-ps\n"
         "seed: 5\n"
         "strategy: {kind: parameter_server, num_ps: 2, workers: 2, partitioner: {kind: fixed, "
         "num_shards: 2}, mode: async}\n"
         "model: {kind: embedding, num_users: 20, num_items: 10, embedding_dim: 4}\n"
         "data: {kind: synthetic_ratings, examples: 2000, global_batch: 16, shuffle: true}\n"
         "optimizer: {kind: adagrad, learning_rate: 0.5}\n"
         "train: {steps: 20, log_every: 5}\n"
         "compare:\n  stop: {steps: 20}\n  variants:\n" +
         variants;
}

std::string fresh_out(const std::string& name) {
  auto dir =
      fs::temp_directory_path() / ("troupe-compare-ps-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir.string();
}

void run(Runtime& runtime, const CompareSpec& spec, const std::string& out) {
  CompareOptions options;
  options.out_dir = out;
  options.out = std::tmpfile();
  run_comparison(runtime.system(), spec, options);
  std::fclose(options.out);
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream in(line);
  std::string cell;
  while (std::getline(in, cell, ',')) cells.push_back(cell);
  return cells;
}

// summary.csv as rows of named cells.
std::vector<std::map<std::string, std::string>> read_summary(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const auto header = split(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    const auto cells = split(line);
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    rows.push_back(row);
  }
  return rows;
}

// What a variant's timeline says, summed independently of read_step_breakdown: the workers'
// closures, the bytes their "ps" spans name, and the time in pulls and token waits.
struct PsSpans {
  int64_t closures = 0;
  double bytes = 0, parameter_us = 0;
  int64_t pulls = 0, pushes = 0, offers = 0, tokens = 0;
  std::set<int64_t> tracks;
};

PsSpans read_ps_spans(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  PsSpans s;
  const Json trace = Json::parse(text.str());
  for (const Json& e : trace.find("traceEvents")->items()) {
    const Json* cat = e.find("cat");
    if (!cat) continue;
    if (cat->text() == "replica") {
      ++s.closures;
      s.tracks.insert(e.find("tid")->as_int());
    }
    if (cat->text() != "ps") continue;
    const std::string& name = e.find("name")->text();
    const double dur = e.find("dur")->as_double();
    double bytes = 0;
    if (name.find(' ') != std::string::npos) bytes = std::stod(name.substr(name.find(' ') + 1));
    s.bytes += bytes;
    if (name.rfind("pull", 0) == 0) ++s.pulls, s.parameter_us += dur;
    if (name.rfind("token", 0) == 0) ++s.tokens, s.parameter_us += dur;
    if (name.rfind("push", 0) == 0) ++s.pushes;
    if (name.rfind("offer", 0) == 0) ++s.offers;
  }
  return s;
}

TEST(ComparePs, AsyncAndSyncVariantsRunAndTheTableHoldsTheirBytesAndWaits) {
  Runtime runtime;
  auto spec =
      parse_compare(ps_comparison("    - {name: ps_async}\n"
                                  "    - name: ps_sync\n"
                                  "      strategy: {mode: sync, replicas_to_aggregate: 2}\n"),
                    "cmp.yaml");
  const std::string out = fresh_out("table");
  run(runtime, spec, out);
  const auto rows = read_summary(out + "/summary.csv");
  ASSERT_EQ(rows.size(), 2u);
  // Per worker step: both tables pulled whole, (20 + 10) x 4 float32 = 480 bytes; 8 rows of
  // each table's gradient pushed, 8 x 4 float32 values + 8 int64 ids = 192 bytes each.
  const double pulled = (20 + 10) * 4 * 4, gradients = 2 * (8 * 4 * 4 + 8 * 8);
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    const std::string& name = spec.variants[i].name;
    SCOPED_TRACE(name);
    EXPECT_EQ(row.at("variant"), name);
    EXPECT_EQ(row.at("workers"), "2");
    EXPECT_EQ(row.at("replicas"), "2");
    EXPECT_EQ(row.at("steps"), "20");
    const std::string dir = variant_run_dir(out, name);
    // The final loss is the variant's last metrics.csv row.
    const auto metrics = read_metrics_csv(dir + "/metrics.csv");
    ASSERT_EQ(metrics.size(), 4u);
    EXPECT_EQ(std::stod(row.at("final_loss")), metrics.back().loss);
    // It trained: async applies 40 updates of 8 ratings. Sync applies 10 averaged ones, and
    // which gradients go stale depends on the workers' timing, so its 5-step window means of 8
    // ratings each can rise over so few updates (seen under a loaded parallel ctest); sync
    // training to a loss threshold is shown by PsTraining's and PsSyncResume's tests.
    if (name == "ps_async") {
      EXPECT_LT(metrics.back().loss, metrics.front().loss);
    }
    // Bytes and waits are the timeline's spans over its closures (20 steps x 2 workers).
    const PsSpans spans = read_ps_spans(dir + "/timeline.json");
    EXPECT_EQ(spans.closures, 40);
    EXPECT_EQ(spans.tracks, (std::set<int64_t>{1, 2}));
    EXPECT_EQ(spans.pulls, 40);
    const double bytes = std::stod(row.at("bytes_per_step"));
    EXPECT_NEAR(bytes, spans.bytes / 40, 1e-6 * bytes);
    EXPECT_NEAR(std::stod(row.at("parameter_wait_ms")), spans.parameter_us / 40 / 1000,
                1e-5 + 1e-5 * spans.parameter_us);
    EXPECT_GT(std::stod(row.at("parameter_wait_ms")), 0);
    EXPECT_EQ(std::stod(row.at("barrier_ms")), 0);  // no merge_call in a ps step
    const StepBreakdown b = read_step_breakdown(dir + "/timeline.json");
    EXPECT_EQ(b.steps, 20);
    EXPECT_NEAR(b.input_ms + b.compute_ms + b.communication_ms + b.parameter_wait_ms + b.wait_ms,
                b.step_ms, 1e-6 * b.step_ms);
    if (name == "ps_async") {
      EXPECT_EQ(spans.pushes, 40);
      EXPECT_EQ(spans.tokens, 0);
      EXPECT_EQ(bytes, pulled + gradients);
    } else {
      // Every closure waits for a token and offers its gradients; the offers that complete a
      // step push the mean, both workers' rows (stale offers, dropped, push nothing).
      EXPECT_EQ(spans.tokens, 40);
      EXPECT_EQ(spans.offers, 40);
      EXPECT_GE(spans.pushes, 1);
      EXPECT_LE(spans.pushes, 20);
      EXPECT_EQ(bytes, pulled + gradients + double(spans.pushes) * 2 * gradients / 40);
    }
  }
  // The page has the column and the rows name the ps tasks.
  std::ifstream page(out + "/report.md");
  const std::string text((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("waiting for parameters"), std::string::npos);
  EXPECT_NE(text.find("| ps_async | 2 x 1 + 2 ps | 20 |"), std::string::npos) << text;
  EXPECT_NE(text.find("| ps_sync | 2 x 1 + 2 ps | 20 |"), std::string::npos) << text;
  fs::remove_all(out);
}

TEST(ComparePs, OneWorkerVariantsWithIdenticalSettingsGiveIdenticalCurves) {
  Runtime runtime;
  const std::string one_worker = "      strategy: {workers: 1}\n";
  const std::string one_worker_sync = "      strategy: {workers: 1, mode: sync}\n";
  auto spec =
      parse_compare(ps_comparison("    - name: async_a\n" + one_worker + "    - name: async_b\n" +
                                  one_worker + "    - name: sync_a\n" + one_worker_sync +
                                  "    - name: sync_b\n" + one_worker_sync),
                    "cmp.yaml");
  const std::string out = fresh_out("identical");
  run(runtime, spec, out);
  for (const auto& [a_name, b_name] :
       {std::make_pair("async_a", "async_b"), std::make_pair("sync_a", "sync_b")}) {
    SCOPED_TRACE(a_name);
    auto a = read_metrics_csv(variant_run_dir(out, a_name) + "/metrics.csv");
    auto b = read_metrics_csv(variant_run_dir(out, b_name) + "/metrics.csv");
    ASSERT_EQ(a.size(), 4u);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].step, b[i].step);
      EXPECT_EQ(a[i].loss, b[i].loss) << "step " << a[i].step;  // bitwise
    }
    EXPECT_LT(a.back().loss, a.front().loss);
  }
  // One worker applying every step's gradients itself: sync (R = 1) computes what async does.
  auto async_a = read_metrics_csv(variant_run_dir(out, "async_a") + "/metrics.csv");
  auto sync_a = read_metrics_csv(variant_run_dir(out, "sync_a") + "/metrics.csv");
  for (size_t i = 0; i < async_a.size(); ++i)
    EXPECT_EQ(async_a[i].loss, sync_a[i].loss) << "step " << async_a[i].step;
  fs::remove_all(out);
}

}  // namespace
}  // namespace troupe::experiment
