#include "experiment/run/progress.hpp"

#include <cmath>
#include <filesystem>

#include "core/status.hpp"

namespace troupe {
namespace {

std::string eta(const ProgressPoint& p) {
  const double rate = p.eta_steps_per_s > 0 ? p.eta_steps_per_s : p.steps_per_s;
  if (rate <= 0) return "?";
  int64_t s = int64_t(std::ceil(double(p.total_steps - p.step) / rate));
  if (s >= 3600) return std::to_string(s / 3600) + "h" + std::to_string(s % 3600 / 60) + "m";
  if (s >= 60) return std::to_string(s / 60) + "m" + std::to_string(s % 60) + "s";
  return std::to_string(s) + "s";
}

}  // namespace

double EtaRate::after_chunk(int64_t step, Clock::time_point now, double chunk_steps_per_s) {
  if (!started_) {
    started_ = true;
    from_step_ = step;
    from_ = now;
    return chunk_steps_per_s;
  }
  const double seconds = std::chrono::duration<double>(now - from_).count();
  if (step <= from_step_ || seconds <= 0) return chunk_steps_per_s;
  return double(step - from_step_) / seconds;
}

ProgressReporter::ProgressReporter(std::FILE* out, bool tty, const std::string& csv_path)
    : out_(out), tty_(tty) {
  if (csv_path.empty()) return;
  bool fresh = !std::filesystem::exists(csv_path);
  csv_ = std::fopen(csv_path.c_str(), "a");
  if (!csv_) throw unavailable("cannot open metrics file '" + csv_path + "' for writing");
  if (fresh) std::fprintf(csv_, "step,loss,accuracy,steps_per_s,examples_per_s\n");
}

ProgressReporter::~ProgressReporter() {
  if (csv_) std::fclose(csv_);
}

std::string ProgressReporter::format(const ProgressPoint& p, bool loss_known) {
  char line[256];
  char loss[32] = "-";
  if (loss_known) std::snprintf(loss, sizeof loss, "%.6f", p.loss);
  char acc[32] = "";
  if (loss_known && p.accuracy >= 0) std::snprintf(acc, sizeof acc, " accuracy=%.4f", p.accuracy);
  std::snprintf(line, sizeof line, "step %lld/%lld loss=%s%s steps/s=%.1f examples/s=%.0f eta=%s",
                static_cast<long long>(p.step), static_cast<long long>(p.total_steps), loss, acc,
                p.steps_per_s, p.examples_per_s, eta(p).c_str());
  return line;
}

void ProgressReporter::tick(const ProgressPoint& p) {
  if (!tty_) return;
  auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(100) && p.step != p.total_steps) return;
  last_draw_ = now;
  const int width = 30;
  int filled = p.total_steps > 0 ? int(width * p.step / p.total_steps) : 0;
  std::string bar(size_t(filled), '=');
  if (filled < width) bar += '>';
  bar.resize(size_t(width), ' ');
  std::fprintf(out_, "\r[%s] %s\033[K", bar.c_str(), format(p, loss_known_).c_str());
  std::fflush(out_);
  bar_open_ = true;
}

void ProgressReporter::log(const ProgressPoint& p) {
  loss_known_ = true;
  if (tty_) {
    std::fprintf(out_, "\r%s\033[K\n", format(p).c_str());
    bar_open_ = false;
  } else {
    std::fprintf(out_, "%s\n", format(p).c_str());
  }
  std::fflush(out_);
  if (csv_) {
    std::fprintf(csv_, "%lld,%.9g,%.9g,%.6g,%.6g\n", static_cast<long long>(p.step), p.loss,
                 p.accuracy, p.steps_per_s, p.examples_per_s);
    std::fflush(csv_);
  }
}

void ProgressReporter::finish() {
  if (tty_ && bar_open_) std::fprintf(out_, "\n");
  bar_open_ = false;
  std::fflush(out_);
}

}  // namespace troupe
