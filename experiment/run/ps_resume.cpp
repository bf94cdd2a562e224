#include "experiment/run/ps_resume.hpp"

#include <fstream>
#include <sstream>

#include "core/status.hpp"
#include "train/ps_trainer.hpp"

namespace troupe {
namespace {

// Calls fn(name, variable) for every variable and slot of the trainer, in a fixed order.
template <class Fn>
void for_each_variable(PsTrainer& trainer, Fn&& fn) {
  auto& opt = trainer.optimizer();
  for (size_t i = 0; i < trainer.variables().size(); ++i) {
    auto& v = trainer.variables()[i];
    fn(v.name(), v);
    for (auto& slot : opt.slot_names()) fn(opt.slot(i, slot).name(), opt.slot(i, slot));
  }
}

}  // namespace

std::string format_worker_batches(const std::vector<int64_t>& drawn) {
  std::string out;
  for (size_t w = 0; w < drawn.size(); ++w) out += (w ? "," : "") + std::to_string(drawn[w]);
  return out;
}

std::vector<int64_t> parse_worker_batches(const std::string& blob, size_t workers,
                                          const std::string& checkpoint) {
  std::vector<int64_t> out;
  std::stringstream in(blob);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    int64_t n = -1;
    try {
      n = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || n < 0)
      throw invalid_argument("checkpoint '" + checkpoint + "': ps_worker_batches '" + blob +
                             "' is not a list of batch counts");
    out.push_back(n);
  }
  if (out.size() != workers)
    throw invalid_argument("checkpoint '" + checkpoint + "' was written by " +
                           std::to_string(out.size()) + " worker(s), this run has " +
                           std::to_string(workers) +
                           " (strategy.workers): each worker reads its own shard of the data");
  return out;
}

std::string format_sync_state(const PsSyncState& state) {
  return std::to_string(state.global_step) + "," + std::to_string(state.pending);
}

PsSyncState parse_sync_state(const std::string& blob, const std::string& checkpoint) {
  PsSyncState out;
  const size_t comma = blob.find(',');
  size_t used_step = 0, used_pending = 0;
  try {
    if (comma != std::string::npos) {
      out.global_step = std::stoll(blob.substr(0, comma), &used_step);
      out.pending = std::stoll(blob.substr(comma + 1), &used_pending);
    }
  } catch (const std::exception&) {
    used_step = used_pending = 0;
  }
  if (comma == std::string::npos || used_step != comma || used_step == 0 ||
      used_pending != blob.size() - comma - 1 || out.global_step < 0 || out.pending < 0)
    throw invalid_argument("checkpoint '" + checkpoint + "': ps_sync '" + blob +
                           "' is not 'global step,pending gradients'");
  return out;
}

std::map<std::string, Tensor> ps_checkpoint_tensors(PsTrainer& trainer) {
  std::map<std::string, Tensor> tensors;
  for_each_variable(trainer, [&](const std::string& name, DistributedVariable& v) {
    tensors.emplace(name, v.storage().read(0));
  });
  tensors.emplace("optimizer/iterations", Tensor::from_scalar<int64_t>(trainer.updates_applied()));
  return tensors;
}

void restore_ps_checkpoint(PsTrainer& trainer, const std::map<std::string, Tensor>& tensors,
                           const std::string& checkpoint) {
  for_each_variable(trainer, [&](const std::string& name, DistributedVariable& v) {
    auto it = tensors.find(name);
    if (it == tensors.end())
      throw not_found("checkpoint '" + checkpoint + "' has no tensor '" + name +
                      "' (written by a different model or optimizer?)");
    if (it->second.dtype() != v.dtype() || it->second.shape() != v.shape())
      throw invalid_argument("checkpoint '" + checkpoint + "': tensor '" + name + "' is " +
                             it->second.description() + " but the model needs " +
                             std::string(dtype_name(v.dtype())) + v.shape().to_string());
  });
  auto iterations = tensors.find("optimizer/iterations");
  if (iterations == tensors.end())
    throw not_found("checkpoint '" + checkpoint + "' has no tensor 'optimizer/iterations'");
  // Everything checked: now write. A sharded variable splits the whole tensor over the parts
  // it has in this run, whatever parts wrote it.
  for_each_variable(trainer, [&](const std::string& name, DistributedVariable& v) {
    v.storage().write(0, VariableWrite::assign, {tensors.at(name)});
  });
  trainer.restore_updates_applied(iterations->second.scalar<int64_t>());
}

int64_t last_logged_step(const std::string& run_dir) {
  std::ifstream in(run_dir + "/metrics.csv");
  std::string line;
  int64_t last = 0;
  while (std::getline(in, line)) {
    try {
      size_t used = 0;
      int64_t step = std::stoll(line, &used);
      if (used < line.size() && line[used] == ',') last = std::max(last, step);
    } catch (const std::exception&) {
      // the header
    }
  }
  return last;
}

}  // namespace troupe
