#include "coordinator/context.hpp"

#include "coordinator/replica_context.hpp"

namespace troupe {

ThreadContext& this_thread_context() {
  thread_local ThreadContext context;
  return context;
}

bool in_cross_replica_context() {
  auto& c = this_thread_context();
  return c.strategy != nullptr && c.replica == nullptr;
}

ReplicaContext* get_replica_context() { return this_thread_context().replica; }

Strategy* current_strategy() { return this_thread_context().strategy; }

int current_replica_id() {
  auto& c = this_thread_context();
  if (c.replica) return c.replica->replica_id_in_sync_group();
  return c.update_replica_id;
}

UpdateContextGuard::UpdateContextGuard(int replica_id)
    : saved_(this_thread_context().update_replica_id) {
  this_thread_context().update_replica_id = replica_id;
}

UpdateContextGuard::~UpdateContextGuard() { this_thread_context().update_replica_id = saved_; }

}  // namespace troupe
