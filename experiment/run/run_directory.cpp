#include "experiment/run/run_directory.hpp"

#include <algorithm>
#include <filesystem>
#include <regex>

#include "core/status.hpp"

namespace troupe {

namespace fs = std::filesystem;

std::string run_directory(const proto::Experiment& e, const std::string& dir_override) {
  if (!dir_override.empty()) return dir_override;
  if (!e.train().checkpoint_dir().empty()) return e.train().checkpoint_dir();
  return "runs/" + e.name();
}

std::vector<std::string> earlier_run_files(const std::string& dir) {
  // Only names troupe writes: experiment/checkpoint (ckpt-N.data, ckpt-N.manifest, their .tmp
  // while written, the `checkpoint` pointer), ProgressReporter and EventWriter.
  static const std::regex troupe_file(
      R"((ckpt-[0-9]+\.(data|manifest)|checkpoint|metrics\.csv|events\.out\.tfevents\..*)(\.tmp)?)");
  std::vector<std::string> files;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    if (std::regex_match(entry.path().filename().string(), troupe_file))
      files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

void check_run_directory(const std::string& dir, bool resume, bool overwrite) {
  if (resume || overwrite) return;
  auto files = earlier_run_files(dir);
  if (files.empty()) return;
  throw failed_precondition(
      "run directory '" + dir + "' already holds an earlier run (" +
      fs::path(files.front()).filename().string() +
      (files.size() > 1 ? " and " + std::to_string(files.size() - 1) + " more file(s)" : "") +
      "): pass --resume to continue it, --overwrite to delete its checkpoints, metrics and "
      "events and start fresh, or --dir to run elsewhere");
}

size_t remove_earlier_run(const std::string& dir) {
  auto files = earlier_run_files(dir);
  for (const auto& f : files) fs::remove(f);
  return files.size();
}

std::string worker_temp_directory(const std::string& run_dir, int index) {
  return run_dir + ".workertemp_" + std::to_string(index);
}

WorkerTempDirectory::WorkerTempDirectory(std::string path) : path_(std::move(path)) {
  if (path_.empty()) return;
  std::filesystem::remove_all(path_);  // a crashed earlier run's leftovers
  std::filesystem::create_directories(path_);
}

WorkerTempDirectory::~WorkerTempDirectory() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace troupe
