// `troupe compare FILE [--out DIR] [--resume]`: runs the variants of a comparison file one after
// another (experiment/compare/) and writes the report; docs/compare.md shows one. Ctrl-C stops the
// running variant with a checkpoint; `--resume` then skips the finished variants and restarts the
// others.
#include <unistd.h>

#include <cstdio>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "cli/run_interrupts.hpp"
#include "cli/run_training.hpp"
#include "coordinator/runtime.hpp"
#include "experiment/compare/compare_runner.hpp"
#include "net/child_process.hpp"

namespace po = boost::program_options;

namespace troupe::cli {

int run_compare_command(const std::vector<std::string>& args) {
  po::options_description options("troupe compare options");
  std::string file, out;
  bool resume = false;
  options.add_options()("file", po::value(&file), "comparison file (an experiment with compare:)")(
      "out", po::value(&out), "output directory (default: runs/<name>-compare)")(
      "resume", po::bool_switch(&resume), "finish a comparison: skip the finished variants");
  po::variables_map vm;
  if (!parse_command_line("troupe compare FILE [--out DIR] [--resume]", args, options, vm,
                          {"file"}))
    return 0;
  if (file.empty()) throw po::error("a comparison file is required");
  // Every variant is parsed and checked before anything runs.
  experiment::CompareSpec spec = experiment::load_compare(file);
  experiment::CompareOptions run;
  run.out_dir = out.empty() ? "runs/" + spec.name + "-compare" : out;
  run.resume = resume;
  run.tty = ::isatty(STDOUT_FILENO) != 0;
  run.troupe_binary = current_executable();
  try {
    experiment::check_compare_directory(run.out_dir, resume);
  } catch (const Error& e) {
    throw po::error(e.what());  // a used --out is a usage error: exit 2
  }
  RunInterrupts interrupts("troupe compare", kDefaultStopGrace, [&](int, RunPhase) {
    std::fprintf(stderr, "troupe compare: interrupted while setting up a variant\n");
  });
  run.stop = interrupts.stop();
  run.phase = interrupts.phase();
  Runtime runtime(ActorSystemOptions::for_replica_training());
  std::printf("troupe compare: %s, %zu variant(s) into %s\n", spec.name.c_str(),
              spec.variants.size(), run.out_dir.c_str());
  std::fflush(stdout);
  experiment::CompareOutcome outcome = experiment::run_comparison(runtime.system(), spec, run);
  if (outcome.interrupted) {
    std::printf("interrupted\nresume with: troupe compare %s --out %s --resume\n", file.c_str(),
                run.out_dir.c_str());
    std::fflush(stdout);
    return exit_code_for_signal(interrupts.signal());
  }
  std::printf("report: %s\n", outcome.report.c_str());
  std::fflush(stdout);
  return 0;
}

}  // namespace troupe::cli
