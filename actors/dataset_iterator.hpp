#pragma once
// The dataset_iterator actor: one per input worker. It owns that worker's core/data iterator,
// hands out one step at a time (element k of the worker's stream goes to replica k mod R, so a
// step is R consecutive elements) and reads up to `buffer_steps` steps ahead between requests
// (bounded prefetch = back-pressure). Event-based; it never blocks and never dies of a pipeline
// error: a failing step is answered with the error (code + message naming file and offset).
// Reads, saves and restores of the pipeline run on the actor's own reader thread
// (core/worker_thread.hpp), which answers by message: a read that blocks (a slow disk, a FIFO
// with no writer) holds no scheduler thread, and exiting the actor abandons it.
//
// Protocol (messages/input_messages.hpp): input_pull_msg -> input_step_msg,
// input_save_msg -> input_state_msg, input_restore_msg -> input_state_msg; input_unpull_msg
// (no answer) gives steps pulled ahead but not used back, to the front of the read-ahead.

#include <cstdint>
#include <functional>
#include <vector>

#include <caf/fwd.hpp>

#include "core/data/dataset.hpp"

namespace troupe {

/// How a dataset_iterator cuts and buffers its stream.
struct DatasetIteratorOptions {
  int32_t replicas = 1;      ///< replicas this input worker feeds (elements per step)
  int64_t buffer_steps = 1;  ///< steps read ahead (experimental_per_replica_buffer_size); 0: none
  /// Runs on the reader thread on every step read, before it is buffered: puts element r where
  /// replica r computes (InputOptions::experimental_fetch_to_device), so that steps read ahead
  /// are already there. A throw fails the step like a read error. Empty: elements stay as read.
  std::function<void(std::vector<data::Element>& elements)> place;
  /// With `place`: a placed tensor back in host memory. A saved state holds the steps read
  /// ahead, and only host values can be encoded.
  std::function<Tensor(const Tensor&)> to_host;
};

/// Spawns the actor over a fresh iterator of `dataset`. The caller must exit it explicitly
/// (caf::anon_send_exit) when done: a live actor would keep the actor system from shutting down.
caf::actor spawn_dataset_iterator(caf::actor_system& system, const data::Dataset& dataset,
                                  DatasetIteratorOptions options);

}  // namespace troupe
