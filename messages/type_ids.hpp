#pragma once
// THE list of message types. Every process registers the same names (CAF 0.17 sends an empty
// message for an unregistered type), and tests/messages round-trips every entry. Adding a type is
// one line in TROUPE_MESSAGE_TYPES.

#include <caf/actor_system_config.hpp>

#include "messages/auth_msg.hpp"
#include "messages/collective_messages.hpp"
#include "messages/input_messages.hpp"
#include "messages/ps_messages.hpp"
#include "messages/ps_step_messages.hpp"
#include "messages/replica_messages.hpp"
#include "messages/sync_replicas_messages.hpp"
#include "messages/tensor_msg.hpp"

/// X(type, "wire name") for each registered message type.
#define TROUPE_MESSAGE_TYPES(X)                                    \
  X(::troupe::tensor_msg, "troupe.tensor_msg")                     \
  X(::troupe::tensor_chunk_msg, "troupe.tensor_chunk_msg")         \
  X(::troupe::input_pull_msg, "troupe.input_pull_msg")             \
  X(::troupe::input_step_msg, "troupe.input_step_msg")             \
  X(::troupe::input_unpull_msg, "troupe.input_unpull_msg")         \
  X(::troupe::input_fill_msg, "troupe.input_fill_msg")             \
  X(::troupe::input_save_msg, "troupe.input_save_msg")             \
  X(::troupe::input_worker_state, "troupe.input_worker_state")     \
  X(::troupe::input_restore_msg, "troupe.input_restore_msg")       \
  X(::troupe::input_state_msg, "troupe.input_state_msg")           \
  X(::troupe::challenge_msg, "troupe.challenge_msg")               \
  X(::troupe::proof_msg, "troupe.proof_msg")                       \
  X(::troupe::merge_arrival_msg, "troupe.merge_arrival_msg")       \
  X(::troupe::replica_done_msg, "troupe.replica_done_msg")         \
  X(::troupe::merge_timeout_msg, "troupe.merge_timeout_msg")       \
  X(::troupe::CollectiveMessage, "troupe.collective_message")      \
  X(::troupe::collective_start_msg, "troupe.collective_start_msg") \
  X(::troupe::collective_peers_msg, "troupe.collective_peers_msg") \
  X(::troupe::collective_join_msg, "troupe.collective_join_msg")   \
  X(::troupe::ps_create_msg, "troupe.ps_create_msg")               \
  X(::troupe::ps_read_msg, "troupe.ps_read_msg")                   \
  X(::troupe::ps_gather_msg, "troupe.ps_gather_msg")               \
  X(::troupe::ps_value_msg, "troupe.ps_value_msg")                 \
  X(::troupe::ps_write_msg, "troupe.ps_write_msg")                 \
  X(::troupe::ps_apply_msg, "troupe.ps_apply_msg")                 \
  X(::troupe::ps_ack_msg, "troupe.ps_ack_msg")                     \
  X(::troupe::ps_save_msg, "troupe.ps_save_msg")                   \
  X(::troupe::ps_checkpoint_msg, "troupe.ps_checkpoint_msg")       \
  X(::troupe::ps_run_step_msg, "troupe.ps_run_step_msg")           \
  X(::troupe::ps_step_done_msg, "troupe.ps_step_done_msg")         \
  X(::troupe::sync_offer_msg, "troupe.sync_offer_msg")             \
  X(::troupe::sync_offer_reply_msg, "troupe.sync_offer_reply_msg")

namespace troupe {

/// A value-less carrier of a type, for for_each_message_type callbacks.
template <class T>
struct type_tag {
  using type = T;
};

/// Calls fn(type_tag<T>{}, name) for every registered message type, in list order.
template <class Fn>
void for_each_message_type(Fn&& fn) {
#define TROUPE_VISIT_MESSAGE_TYPE(type, name) fn(type_tag<type>{}, name);
  TROUPE_MESSAGE_TYPES(TROUPE_VISIT_MESSAGE_TYPE)
#undef TROUPE_VISIT_MESSAGE_TYPE
}

/// Registers every troupe message type with its wire name; call once per actor_system_config.
inline void register_message_types(caf::actor_system_config& cfg) {
  for_each_message_type([&](auto tag, const char* name) {
    cfg.add_message_type<typename decltype(tag)::type>(name);
  });
}

}  // namespace troupe
