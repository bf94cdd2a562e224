// `troupe run [FILE]`: train an experiment (the embedded default without FILE) in this process.
// SIGINT / SIGTERM stop after the current chunk of steps, write a checkpoint and exit 130 / 143
// with the command that resumes (cli/run_interrupts.hpp); `--resume` continues from it.
#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "cli/run_training.hpp"
#include "coordinator/runtime.hpp"

namespace po = boost::program_options;

namespace troupe::cli {

int run_run_command(const std::vector<std::string>& args) {
  po::options_description options("troupe run options");
  RunCommandOptions run;
  add_run_options(options, run);
  po::variables_map vm;
  if (!parse_command_line(
          "troupe run [FILE] [--resume | --overwrite] [--timeline trace.json] [--dir DIR]", args,
          options, vm, {"file"}))
    return 0;
  check_run_options(run);
  Runtime runtime(ActorSystemOptions::for_replica_training());
  return train_from_command_line("troupe run", run, runtime, nullptr);
}

}  // namespace troupe::cli
