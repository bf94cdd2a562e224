#pragma once
// Blocking requests to ps_shard actors from a coordinator thread (outside any actor). A batch of
// requests to several shards is sent at once and then awaited, so the shards work in parallel
// (an embedding lookup gathers from every shard at the same time). Large dense values of shards
// in other processes can take their ps task's bulk connection instead (use_bulk).

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "messages/ps_messages.hpp"

namespace troupe {

class PsBulkClient;
/// Which shard takes over from which (primary-backup, replication 2), and which went away.
/// Shared by every request of a client, from any thread.
class PsFailover {
 public:
  void set_backup(const caf::actor& primary, caf::actor backup);
  /// The shard serving `shard`'s variables now: `shard`, or its backup once it went away.
  caf::actor serving(const caf::actor& shard) const;
  /// `shard` went away: marks it so and returns its backup (invalid when it has none), which
  /// serves its variables from now on. Says so on stderr the first time.
  caf::actor fail_over(const caf::actor& shard, const std::string& label, const std::string& why);
  /// How many shards have failed over to their backup.
  size_t failed_over() const;

 private:
  mutable std::mutex mutex_;
  std::map<caf::actor_addr, caf::actor> backup_;
  std::set<caf::actor_addr> gone_;
};

/// Talks to ps_shard actors; a reply error is thrown as troupe::Error with the shard's Code and
/// message (a timeout as deadline_exceeded, a lost shard as unavailable).
class PsClient {
 public:
  explicit PsClient(caf::actor_system& sys,
                    std::chrono::milliseconds timeout = std::chrono::seconds(60));

  void create(const caf::actor& shard, const ps_create_msg& msg) const;
  Tensor read(const caf::actor& shard, const std::string& name) const;
  ps_ack_msg write(const caf::actor& shard, const ps_write_msg& msg) const;
  ps_ack_msg apply(const caf::actor& shard, const ps_apply_msg& msg) const;
  ps_checkpoint_msg save(const caf::actor& shard, const ps_save_msg& msg) const;
  ps_ack_msg restore(const caf::actor& shard, const ps_checkpoint_msg& msg) const;

  /// Reads of several (shard, name) at once; values in request order.
  std::vector<Tensor> read_all(const std::vector<std::pair<caf::actor, ps_read_msg>>& reads) const;
  /// Gathers from several shards at once; rows in request order. `row_bytes` (one row's size)
  /// lets gathers of enough bytes take a shard's bulk connection; 0 keeps them on CAF.
  std::vector<Tensor> gather_all(const std::vector<std::pair<caf::actor, ps_gather_msg>>& gathers,
                                 uint64_t row_bytes = 0) const;
  /// Optimizer steps on several shards at once; acknowledgements in request order.
  std::vector<ps_ack_msg> apply_all(
      const std::vector<std::pair<caf::actor, ps_apply_msg>>& steps) const;
  /// Saves on several shards at once; checkpoints in request order.
  std::vector<ps_checkpoint_msg> save_all(
      const std::vector<std::pair<caf::actor, ps_save_msg>>& saves) const;
  /// Restores on several shards at once; acknowledgements in request order.
  std::vector<ps_ack_msg> restore_all(
      const std::vector<std::pair<caf::actor, ps_checkpoint_msg>>& restores) const;
  /// Writes to several shards at once; acknowledgements in request order.
  std::vector<ps_ack_msg> write_all(
      const std::vector<std::pair<caf::actor, ps_write_msg>>& writes) const;

  std::chrono::milliseconds timeout() const { return timeout_; }

  /// Names the shards (e.g. the ps tasks of connect_ps_shards) so that a shard that goes away
  /// is named in the error: "ps shard /job:ps/task:1 serving variable 'w' went away: ...".
  /// Throws invalid_argument when the two lists differ in length.
  void name_shards(const std::vector<caf::actor>& shards, const std::vector<std::string>& names);

  /// From now on the pulls of `shard`, and the dense pushes and applies `bulk` carries
  /// (PsBulkClient::carries), travel over `bulk` when the shard lives in another process; the
  /// rest stays CAF messages. Several requests of one batch run at the same time either way.
  /// Throws invalid_argument for an empty handle or client.
  void use_bulk(const caf::actor& shard, std::shared_ptr<PsBulkClient> bulk);
  /// Payload bytes the registered bulk connections sent and received so far, all shards.
  uint64_t bulk_bytes_sent() const;
  uint64_t bulk_bytes_received() const;
  /// Primary-backup: shard k's variables have their backup on shard (k + 1) % n. Tells every
  /// shard its backup and whose copies it holds, and from then on a request whose shard goes
  /// away (its actor down, its connection dropped) is sent again, unchanged — the same step id,
  /// so applied once — to the backup, which serves that shard's variables from then on. Throws
  /// invalid_argument for fewer than two shards.
  void replicate(const std::vector<caf::actor>& shards);
  /// The failover half of replicate(), for a client of shards another client has already set
  /// up (a worker process of a launched run, whose coordinator called replicate): learns that
  /// shard k's backup is shard (k + 1) % n and fails over to it as replicate() does, without
  /// telling the shards anything. Sending replicate_atom again from here would re-point every
  /// shard's backup at a handle routed through this process (CAF 0.17 routes a handle through
  /// the node it came from), so the copies would die with it, and it could give a failed-over
  /// shard its dead primary back. Throws invalid_argument for fewer than two shards.
  void learn_backups(const std::vector<caf::actor>& shards);
  /// How many shards this client has failed over to their backup.
  size_t failed_over() const { return failover_->failed_over(); }

 private:
  PsBulkClient* bulk_for(const caf::actor& shard) const;

  caf::actor_system* sys_;
  std::chrono::milliseconds timeout_;
  std::vector<std::pair<caf::actor, std::string>> names_;
  std::vector<std::pair<caf::actor, std::shared_ptr<PsBulkClient>>> bulk_;
  std::shared_ptr<PsFailover> failover_ = std::make_shared<PsFailover>();
};

}  // namespace troupe
