#include "core/data/partial_batch.hpp"

#include "core/data/rebatch.hpp"

namespace troupe::data {

int64_t count_replicas_with_data(const std::vector<std::optional<Element>>& per_replica) {
  int64_t n = 0;
  for (const auto& e : per_replica) n += e.has_value();
  return n;
}

std::optional<std::vector<Element>> fill_missing_replicas(
    const std::vector<std::optional<Element>>& per_replica, const ElementSpec& spec) {
  if (count_replicas_with_data(per_replica) == 0) return std::nullopt;
  std::vector<Element> out;
  for (const auto& e : per_replica) {
    if (e) {
      out.push_back(*e);
      continue;
    }
    out.push_back(std::move(empty_replicas(1, spec).front()));
  }
  return out;
}

std::vector<Element> empty_replicas(size_t replicas, const ElementSpec& spec) {
  std::vector<Element> out(replicas);
  for (auto& dummy : out)
    for (const auto& c : spec) dummy.push_back(empty_like_spec(c));
  return out;
}

std::vector<Element> split_global_batch(const Element& batch, int64_t global_batch_size,
                                        int64_t num_replicas) {
  if (batch.empty()) throw invalid_argument("split_global_batch: element has no components");
  for (const auto& t : batch)
    if (t.shape().rank() == 0 || t.shape()[0] != batch[0].shape()[0])
      throw invalid_argument(
          "split_global_batch: components must be batched with a common "
          "leading dimension, got " +
          t.description());
  int64_t rows = batch[0].shape()[0];
  if (rows > global_batch_size)
    throw invalid_argument("split_global_batch: batch of " + std::to_string(rows) +
                           " rows exceeds the global batch size " +
                           std::to_string(global_batch_size));
  auto sizes = batch_sizes_for_worker(global_batch_size, 1, num_replicas, 0);
  std::vector<Element> out;
  int64_t offset = 0;
  for (auto s : sizes) {
    int64_t n = std::min(s, rows - offset);
    Element part;
    for (const auto& t : batch) part.push_back(t.slice_rows(offset, offset + n));
    offset += n;
    out.push_back(std::move(part));
  }
  return out;
}

}  // namespace troupe::data
