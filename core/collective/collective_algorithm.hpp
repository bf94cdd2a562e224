#pragma once
// The uniform interface of every collective algorithm (sans-I/O, as Gloo's algorithms but without
// transports): the caller hands each rank's instance its input with start(), routes every emitted
// message to its `to` rank's instance with on_message(), and reads result() once done(). Nothing
// here blocks, spawns threads or knows whether peers share a process.
//
// Contract for callers:
//  * Messages may reach an instance before its start(); they are checked, kept and processed
//    when start() runs (an actor may learn of a collective from a peer first).
//  * Delivery order between different senders is free; the algorithms only rely on causality
//    (a message is delivered after it was emitted), so any interleaving gives the same result,
//    bit for bit.
//  * Payloads are views of the sender's buffers. The sender's input must stay unmodified until
//    its done(), and result() may still be shared with in-flight messages to peers: clone() it
//    before writing to it in place.
//  * The algorithms only sum (via the injected ReduceFn); MEAN's division is the caller's.

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/collective/chunk_layout.hpp"
#include "core/collective/collective_message.hpp"
#include "core/tensor.hpp"

namespace troupe {

/// dst[i] += src[i] for i < count, elements of `dtype`; supplied by the kernel layer (or a test).
using ReduceFn = void (*)(void* dst, const void* src, DType dtype, int64_t count);
/// dst[i] = a[i] + b[i]; dst may be exactly a or exactly b (never a partial overlap).
using ReduceIntoFn = void (*)(void* dst, const void* a, const void* b, DType dtype, int64_t count);
/// ReduceIntoFn that also returns whether every sum is finite (no NaN or infinity), in one pass.
using ReduceIntoFiniteFn = bool (*)(void* dst, const void* a, const void* b, DType dtype,
                                    int64_t count);

/// Everything an algorithm instance needs to know about its collective.
struct CollectiveSpec {
  int rank = 0;                   ///< this instance's position in the group, 0..group_size-1
  int group_size = 1;             ///< number of participants
  DType dtype = DType::float32;   ///< element type of every input
  int64_t count = 0;              ///< elements per input (inputs are flattened)
  int64_t chunk_bytes = 1 << 20;  ///< largest payload per message (pipelining granularity)
  int64_t instance = 0;           ///< collective id carried by, and checked on, every message
  ReduceFn reduce = nullptr;      ///< elementwise accumulate
  /// Optional three-operand add: the ring reduces into a fresh buffer with it in one pass
  /// instead of copying its input first. Without it the ring composes copy + `reduce`.
  ReduceIntoFn reduce_into = nullptr;
  /// Optional result buffer (1-D, `count` elements of `dtype`) that every rank of one process
  /// is given, the same one: ring ranks then write their reduced segments straight into it and
  /// the all-gather moves no bytes (each all-gather copy would have source == destination).
  /// Across processes each rank gets its own, or none (the ring allocates one).
  Tensor shared_output;
  int root = 0;              ///< ReduceToOne only: the reduce_to_device index
  int64_t tensor_index = 0;  ///< HierarchicalCopy only: pack index i; rotates the roots
};

/// Base of the collective state machines: the checks common to all, the early-message buffer
/// and the result; subclasses supply the schedule.
class CollectiveAlgorithm {
 public:
  virtual ~CollectiveAlgorithm() = default;
  CollectiveAlgorithm(const CollectiveAlgorithm&) = delete;
  CollectiveAlgorithm& operator=(const CollectiveAlgorithm&) = delete;

  /// Provides this rank's input (dtype and element count must match the spec); returns the
  /// messages to send now. May be called once.
  std::vector<CollectiveMessage> start(const Tensor& input);
  /// Consumes one message addressed to this rank; returns the messages it makes ready. Throws
  /// troupe::Error naming the message when it is foreign, malformed, duplicated or out of order.
  std::vector<CollectiveMessage> on_message(const CollectiveMessage& message);
  /// True once this rank holds its final result.
  bool done() const { return started_ && finished(); }
  /// The reduced tensor, shaped like the input; throws failed_precondition before done().
  Tensor result() const;

  const CollectiveSpec& spec() const { return spec_; }
  /// "ring all-reduce", "reduce-to-one", "hierarchical copy".
  const std::string& name() const { return name_; }

 protected:
  CollectiveAlgorithm(std::string name, const CollectiveSpec& spec);

  /// Throws unless `m` is a message this rank's schedule can ever receive (sender, phase, step,
  /// chunk, offset and count); called on arrival, before or after start.
  virtual void check_identity(const CollectiveMessage& m) const = 0;
  /// Called by start() with the flattened input; returns the first messages.
  virtual std::vector<CollectiveMessage> begin(const Tensor& flat_input) = 0;
  /// Processes one checked message after start; may throw an out-of-order error.
  virtual std::vector<CollectiveMessage> receive(const CollectiveMessage& m) = 0;
  /// True when the final result is in result_.
  virtual bool finished() const = 0;

  /// invalid_argument "<name> rank R: <describe(m)>: <problem>".
  Error message_error(const CollectiveMessage& m, const std::string& problem) const;
  /// A message from this rank to `to` carrying elements `range` of `source` (a 1-D view).
  CollectiveMessage make_message(int to, CollectivePhase phase, int step, int chunk,
                                 ElementRange range, const Tensor& source) const;
  /// Throws unless the header's [offset, count] equals `expected`.
  void check_range(const CollectiveMessage& m, ElementRange expected) const;
  /// `flat` (1-D) elements in `range`, as a view.
  static Tensor view(const Tensor& flat, ElementRange range);
  /// dst[range] = src (a payload); dst[range] += src with spec_.reduce.
  static void copy_into(Tensor& flat, ElementRange range, const Tensor& src);
  void reduce_into(Tensor& flat, ElementRange range, const Tensor& src) const;
  /// dst[range] = a[range] + b (b a payload of range.count elements, possibly dst[range] itself).
  void add_into(Tensor& dst, ElementRange range, const Tensor& a, const Tensor& b) const;

  CollectiveSpec spec_;
  Tensor result_;  ///< flat 1-D result buffer; subclasses fill it
  int64_t chunk_elems_ = 1;

 private:
  std::string name_;
  bool started_ = false;
  Shape input_shape_;
  std::vector<CollectiveMessage> early_;           ///< arrived before start()
  std::set<std::tuple<int, int, int, int>> seen_;  ///< (phase, step, chunk, from)
};

}  // namespace troupe
