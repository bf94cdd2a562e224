#pragma once
// Runs the training loop's output — progress lines, metrics.csv rows, TensorBoard events — on a
// thread of its own, in the order posted, so that a slow terminal, pipe or disk never holds up a
// step (the loop only queues a job). The first job that throws stops the writer; its error
// reaches the loop at the next post() or at close(), so a failed write still fails the run.

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace troupe {

/// One writer thread draining a queue of jobs in order.
class BackgroundWriter {
 public:
  BackgroundWriter();
  /// Finishes the queued jobs and ends the thread (a pending error is dropped: use close()).
  ~BackgroundWriter();
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  /// Queues `job`; rethrows the error of an earlier job, if one failed.
  void post(std::function<void()> job);
  /// Waits until every queued job ran; rethrows the error of the first that failed.
  void drain();
  /// drain(), then ends the thread; later posts throw.
  void close();

 private:
  void run();
  void rethrow_failure();  // under mutex_

  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<std::function<void()>> jobs_;
  bool busy_ = false, closing_ = false;
  std::exception_ptr failure_;
  std::thread thread_;  // last: started once the rest is ready
};

}  // namespace troupe
