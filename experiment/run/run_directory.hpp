#pragma once
// A run directory belongs to one run: a fresh run refuses a directory holding an earlier run's
// checkpoints or metrics (mixing them would make --resume pick up the wrong run), and
// `--overwrite` removes exactly the files troupe wrote there, nothing else.

#include <string>
#include <vector>

#include "messages/proto/experiment.pb.h"

namespace troupe {

/// Where a run goes: `dir_override` (--dir), else train.checkpoint_dir, else runs/<name>.
std::string run_directory(const proto::Experiment& experiment, const std::string& dir_override);

/// The files an earlier run left in `dir` that troupe wrote: ckpt-<step>.data / .manifest (and
/// their .tmp), the `checkpoint` pointer, metrics.csv and events.out.tfevents.*. Sorted; empty
/// when `dir` does not exist.
std::vector<std::string> earlier_run_files(const std::string& dir);

/// Throws failed_precondition naming `dir`, --resume and --overwrite when a fresh run (neither
/// `resume` nor `overwrite`) would start where an earlier run's files are. Writes nothing.
void check_run_directory(const std::string& dir, bool resume, bool overwrite);

/// Removes earlier_run_files(dir); returns how many.
size_t remove_earlier_run(const std::string& dir);

/// Where worker `index` (not the chief) of a multi-worker run writes what the chief writes to
/// `run_dir`: `<run_dir>.workertemp_<index>`.
std::string worker_temp_directory(const std::string& run_dir, int index);

/// A worker's temporary directory: emptied and created on construction, removed on destruction
/// (also when the run fails). An empty path does nothing.
class WorkerTempDirectory {
 public:
  explicit WorkerTempDirectory(std::string path);
  ~WorkerTempDirectory();
  WorkerTempDirectory(const WorkerTempDirectory&) = delete;
  WorkerTempDirectory& operator=(const WorkerTempDirectory&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace troupe
