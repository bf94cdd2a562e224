#include "core/collective/local_driver.hpp"

#include <deque>

#include "core/random.hpp"

namespace troupe {

std::vector<Tensor> run_locally(std::vector<std::unique_ptr<CollectiveAlgorithm>>& peers,
                                const std::vector<Tensor>& inputs,
                                const LocalDriverOptions& options, LocalDriverStats* stats) {
  size_t n = peers.size();
  if (inputs.size() != n)
    throw invalid_argument("run_locally: " + std::to_string(inputs.size()) + " inputs for " +
                           std::to_string(n) + " peers");
  LocalDriverStats local;
  std::deque<CollectiveMessage> pending;
  auto post = [&](std::vector<CollectiveMessage> msgs) {
    for (auto& m : msgs) {
      if (m.to < 0 || size_t(m.to) >= n)
        throw internal_error("run_locally: message to unknown rank: " + m.describe());
      pending.push_back(std::move(m));
    }
  };
  std::vector<size_t> not_started;
  std::vector<bool> started(n, false);
  for (size_t r = 0; r < n; ++r) not_started.push_back(r);
  Philox random(options.seed);
  uint64_t draw = 0;
  auto pick = [&](size_t bound) { return size_t(random.bits(draw++) % bound); };

  if (!options.random_order) {
    for (size_t r = 0; r < n; ++r) post(peers[r]->start(inputs[r]));
    not_started.clear();
    started.assign(n, true);
  }
  while (!pending.empty() || !not_started.empty()) {
    // In random mode a not-yet-started rank competes with the pending messages for the next turn.
    size_t choices = pending.size() + not_started.size();
    size_t choice = options.random_order ? pick(choices) : 0;
    if (choice >= pending.size()) {
      size_t which = choice - pending.size();
      size_t r = not_started[which];
      not_started.erase(not_started.begin() + long(which));
      started[r] = true;
      post(peers[r]->start(inputs[r]));
      continue;
    }
    CollectiveMessage m = std::move(pending[choice]);
    pending.erase(pending.begin() + long(choice));
    ++local.messages;
    local.payload_bytes += int64_t(m.payload.byte_size());
    if (!started[size_t(m.to)]) ++local.early_messages;
    post(peers[size_t(m.to)]->on_message(m));
  }
  std::string unfinished;
  for (size_t r = 0; r < n; ++r)
    if (!peers[r]->done()) unfinished += (unfinished.empty() ? "" : ", ") + std::to_string(r);
  if (!unfinished.empty())
    throw internal_error("run_locally: no messages left but ranks " + unfinished + " are not done");
  if (stats) *stats = local;
  std::vector<Tensor> results;
  for (auto& p : peers) results.push_back(p->result());
  return results;
}

}  // namespace troupe
