#include "core/collective/reduce_to_one.hpp"

#include <numeric>

namespace troupe {

ReduceToOne::ReduceToOne(const CollectiveSpec& spec) : CollectiveAlgorithm("reduce-to-one", spec) {
  if (spec.root < 0 || spec.root >= spec.group_size)
    throw invalid_argument("reduce-to-one: reduce_to_device rank " + std::to_string(spec.root) +
                           " outside group of size " + std::to_string(spec.group_size));
  chunks_ = split_into_chunks({0, spec.count}, chunk_elems_);
  if (is_root()) {
    std::vector<int> everyone(size_t(spec.group_size));
    std::iota(everyone.begin(), everyone.end(), 0);
    sums_ = std::make_unique<ChunkAccumulator>(everyone, chunks_);
  }
}

void ReduceToOne::check_identity(const CollectiveMessage& m) const {
  CollectivePhase expected = is_root() ? CollectivePhase::gather : CollectivePhase::broadcast;
  if (m.phase != expected)
    throw message_error(m, std::string("rank ") +
                               (is_root() ? "is the root and" : "is not the root and") +
                               " only receives " + std::string(phase_name(expected)));
  if (!is_root() && m.from != spec_.root)
    throw message_error(m, "broadcast must come from the root, rank " + std::to_string(spec_.root));
  if (m.step != 0) throw message_error(m, "step must be 0");
  if (m.chunk < 0 || size_t(m.chunk) >= chunks_.size())
    throw message_error(m,
                        "chunk outside the buffer's " + std::to_string(chunks_.size()) + " chunks");
  check_range(m, chunks_[m.chunk]);
}

std::vector<CollectiveMessage> ReduceToOne::begin(const Tensor& flat_input) {
  result_ = Tensor(spec_.dtype, Shape{spec_.count});
  std::vector<CollectiveMessage> out;
  for (size_t c = 0; c < chunks_.size(); ++c) {
    if (!is_root()) {
      out.push_back(
          make_message(spec_.root, CollectivePhase::gather, 0, int(c), chunks_[c], flat_input));
    } else if (sums_->add(spec_.rank, int(c), view(flat_input, chunks_[c]))) {
      finish_chunk(int(c), out);
    }
  }
  return out;
}

std::vector<CollectiveMessage> ReduceToOne::receive(const CollectiveMessage& m) {
  std::vector<CollectiveMessage> out;
  if (!is_root()) {
    copy_into(result_, chunks_[m.chunk], m.payload);
    ++completed_;
  } else if (sums_->add(m.from, m.chunk, m.payload)) {
    finish_chunk(m.chunk, out);
  }
  return out;
}

void ReduceToOne::finish_chunk(int c, std::vector<CollectiveMessage>& out) {
  sums_->sum_into(c, result_, spec_.reduce);
  ++completed_;
  for (int r = 0; r < spec_.group_size; ++r)
    if (r != spec_.rank)
      out.push_back(make_message(r, CollectivePhase::broadcast, 0, c, chunks_[c], result_));
}

}  // namespace troupe
