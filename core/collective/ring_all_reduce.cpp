#include "core/collective/ring_all_reduce.hpp"

namespace troupe {

RingAllReduce::RingAllReduce(const CollectiveSpec& spec)
    : CollectiveAlgorithm("ring all-reduce", spec),
      left_(wrap(spec.rank - 1)),
      right_(wrap(spec.rank + 1)),
      last_step_(spec.group_size - 2) {
  for (const auto& segment : split_evenly(spec.count, spec.group_size))
    chunks_.push_back(split_into_chunks(segment, chunk_elems_));
  for (int k = 0; k <= last_step_; ++k) {
    int rs_segment = incoming_segment(CollectivePhase::reduce_scatter, k);
    int ag_segment = incoming_segment(CollectivePhase::all_gather, k);
    reduced_.emplace_back(chunks_[rs_segment].size(), false);
    expected_ += int64_t(chunks_[rs_segment].size() + chunks_[ag_segment].size());
  }
}

int RingAllReduce::incoming_segment(CollectivePhase phase, int step) const {
  return phase == CollectivePhase::reduce_scatter ? wrap(spec_.rank - 1 - step)
                                                  : wrap(spec_.rank - step);
}

void RingAllReduce::check_identity(const CollectiveMessage& m) const {
  if (m.phase != CollectivePhase::reduce_scatter && m.phase != CollectivePhase::all_gather)
    throw message_error(m, "phase is not part of a ring all-reduce");
  if (m.from != left_)
    throw message_error(
        m, "a ring rank only receives from its left neighbour, rank " + std::to_string(left_));
  if (m.step < 0 || m.step > last_step_)
    throw message_error(m, "step outside 0.." + std::to_string(last_step_));
  const auto& chunks = chunks_[incoming_segment(m.phase, m.step)];
  if (m.chunk < 0 || size_t(m.chunk) >= chunks.size())
    throw message_error(m,
                        "chunk outside the segment's " + std::to_string(chunks.size()) + " chunks");
  check_range(m, chunks[m.chunk]);
}

std::vector<CollectiveMessage> RingAllReduce::begin(const Tensor& flat_input) {
  std::vector<CollectiveMessage> out;
  if (last_step_ < 0) {  // a group of one: the input is the sum
    result_ = flat_input;
    return out;
  }
  // The input is only read: step 0 sends views of it, and every reduction writes
  // input + partial sum into the result buffer in one pass. Each segment of the result is
  // written once by a reduction or an all-gather copy, so the buffer needs no initialisation.
  input_ = flat_input;
  result_ =
      spec_.shared_output.defined() ? spec_.shared_output : Tensor(spec_.dtype, Shape{spec_.count});
  const auto& own = chunks_[spec_.rank];
  for (size_t c = 0; c < own.size(); ++c)
    out.push_back(make_message(right_, CollectivePhase::reduce_scatter, 0, int(c), own[c], input_));
  return out;
}

std::vector<CollectiveMessage> RingAllReduce::receive(const CollectiveMessage& m) {
  ++received_;
  ElementRange range{m.offset, m.count};
  std::vector<CollectiveMessage> out;
  if (m.phase == CollectivePhase::reduce_scatter) {
    // With a shared output, a step > 0 payload is this very range of result_ (the left
    // neighbour's partial sum): add_into then accumulates in place.
    add_into(result_, range, input_, m.payload);
    reduced_[m.step][m.chunk] = true;
    // Forward the grown partial sum; after the last step it is final and starts the all-gather.
    if (m.step < last_step_)
      out.push_back(make_message(right_, m.phase, m.step + 1, m.chunk, range, result_));
    else
      out.push_back(make_message(right_, CollectivePhase::all_gather, 0, m.chunk, range, result_));
    return out;
  }
  // With a shared output the payload is already in place and copy_into moves nothing.
  // all_gather step k overwrites a segment this rank forwarded at reduce_scatter step k, which
  // it could only do after reducing reduce_scatter step k-1; overwriting earlier would destroy
  // a partial sum still to be sent.
  if (m.step > 0 && !reduced_[m.step - 1][m.chunk])
    throw message_error(m, "out of order: arrived before reduce_scatter step " +
                               std::to_string(m.step - 1) + " chunk " + std::to_string(m.chunk));
  copy_into(result_, range, m.payload);
  if (m.step < last_step_)
    out.push_back(make_message(right_, m.phase, m.step + 1, m.chunk, range, result_));
  return out;
}

bool RingAllReduce::finished() const { return received_ == expected_; }

}  // namespace troupe
