// `troupe evaluate [FILE] [--once]`: the side-car evaluator on a run directory, as the evaluator
// task of a cluster runs it: every checkpoint not yet in <run dir>/eval/metrics.csv is evaluated
// on the experiment's eval data. With --once it evaluates what is there and exits (a finished
// run); without, it waits for the checkpoint of the last training step.
#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "cli/evaluator_task.hpp"

namespace po = boost::program_options;

namespace troupe::cli {

int run_evaluate_command(const std::vector<std::string>& args) {
  po::options_description options("troupe evaluate options");
  RunCommandOptions run;
  bool once = false;
  options.add_options()("file", po::value(&run.file),
                        "experiment YAML with an eval section (default: the embedded demo)")(
      "dir", po::value(&run.dir), "run directory (default: train.checkpoint_dir or runs/<name>)")(
      "steps", po::value(&run.steps)->default_value(0),
      "the run's last step, when --steps overrode train.steps")(
      "once", po::bool_switch(&once), "evaluate the checkpoints there now and exit");
  po::variables_map vm;
  if (!parse_command_line("troupe evaluate [FILE] [--dir DIR] [--steps N] [--once]", args, options,
                          vm, {"file"}))
    return 0;
  check_run_options(run);
  return run_evaluator_task("troupe evaluate", run, once);
}

}  // namespace troupe::cli
