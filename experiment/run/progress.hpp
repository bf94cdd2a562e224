#pragma once
// What a user watches during `troupe run`: a progress bar redrawn in place on a terminal (step,
// steps/s, examples/s, loss, ETA), plain log lines otherwise, and metrics.csv for later.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace troupe {

/// One logged window of training.
struct ProgressPoint {
  int64_t step = 0;
  int64_t total_steps = 0;
  double loss = 0;
  double accuracy = -1;  ///< < 0 when the model has none
  double steps_per_s = 0;
  double examples_per_s = 0;
  /// The rate the ETA divides the remaining steps by (EtaRate); 0: steps_per_s.
  double eta_steps_per_s = 0;
};

/// The steps-per-second rate behind a progress line's ETA: over every step since the end of the
/// run's first chunk of steps. That chunk carries the run's warm-up (the first-epoch cache filled,
/// kernels probed), which made the demo's first ETA 7 s for a run that had 1.2 s left when the
/// ETA came from the window's rate. Before that chunk has ended: the chunk's own rate.
class EtaRate {
 public:
  using Clock = std::chrono::steady_clock;
  /// After a chunk of steps that ended at `step` at `now` and ran at `chunk_steps_per_s`.
  double after_chunk(int64_t step, Clock::time_point now, double chunk_steps_per_s);

 private:
  bool started_ = false;
  int64_t from_step_ = 0;
  Clock::time_point from_{};
};

/// Renders progress to a stream and appends metrics.csv.
class ProgressReporter {
 public:
  /// `tty`: redraw one line in place; otherwise one line per log(). csv_path empty: no CSV.
  ProgressReporter(std::FILE* out, bool tty, const std::string& csv_path);
  ~ProgressReporter();
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  /// Every step: redraws the bar on a TTY (at most 10 times a second). Before the first log()
  /// the loss is shown as "loss=-".
  void tick(const ProgressPoint& p);
  /// Every log_every steps: a log line (TTY: a bar line is kept), a CSV row.
  void log(const ProgressPoint& p);
  /// Ends the bar line on a TTY.
  void finish();
  /// "step 50/1000 loss=0.4312 accuracy=0.875 steps/s=21.3 examples/s=5452 eta=45s";
  /// `loss_known` false: "loss=-" (no window has been logged yet, p.loss means nothing).
  static std::string format(const ProgressPoint& p, bool loss_known = true);

 private:
  std::FILE* out_;
  bool tty_;
  std::FILE* csv_ = nullptr;
  std::chrono::steady_clock::time_point last_draw_{};
  bool bar_open_ = false;
  bool loss_known_ = false;  ///< set by the first log(): the bar shows "loss=-" until then
};

}  // namespace troupe
