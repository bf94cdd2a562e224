#include "experiment/run/background_writer.hpp"

#include <utility>

#include "core/status.hpp"

namespace troupe {

BackgroundWriter::BackgroundWriter() : thread_([this] { run(); }) {}

BackgroundWriter::~BackgroundWriter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void BackgroundWriter::rethrow_failure() {
  if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
}

void BackgroundWriter::post(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    rethrow_failure();
    if (closing_) throw failed_precondition("background writer: post after close");
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
}

void BackgroundWriter::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [&] { return (jobs_.empty() && !busy_) || failure_; });
  rethrow_failure();
}

void BackgroundWriter::close() {
  drain();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void BackgroundWriter::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return !jobs_.empty() || closing_; });
    if (jobs_.empty()) return;  // closing, and everything ran
    auto job = std::move(jobs_.front());
    jobs_.pop_front();
    busy_ = true;
    lock.unlock();
    std::exception_ptr error;
    try {
      job();
    } catch (...) {
      error = std::current_exception();
    }
    job = nullptr;  // what it captured goes on this thread, before the loop hears of it
    lock.lock();
    busy_ = false;
    if (error) {
      failure_ = error;
      jobs_.clear();  // later output would describe a run whose output already failed
    }
    if (jobs_.empty() || failure_) idle_.notify_all();
  }
}

}  // namespace troupe
