#include "coordinator/ps/cluster_coordinator.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <mutex>

#include <caf/all.hpp>

#include "coordinator/ps/step_id_scope.hpp"
#include "core/status.hpp"
#include "messages/atoms.hpp"
#include "messages/error_channel.hpp"
#include "messages/ps_step_messages.hpp"
#include "messages/timed_request.hpp"

namespace troupe {
namespace {

using run_closure_atom = caf::atom_constant<caf::atom("runclosur")>;
using dispatch_atom = caf::atom_constant<caf::atom("dispatch")>;

}  // namespace

namespace cluster_detail {

struct Closure {
  uint64_t step_id = 0;
  std::string step;
  std::vector<Tensor> args;
  bool finished = false;
  std::vector<Tensor> outputs;
  std::exception_ptr error;
  int worker = -1;   // who produced the outputs
  int attempts = 0;  // times started on a worker
};

struct WorkerSlot {
  caf::actor actor;
  bool remote = false;  // a step host: closures travel as ps_run_step_msg
  bool alive = true;
  int in_flight = 0;
  std::map<int64_t, ElementFn> iterators;  // touched only by this worker's thread
  // dataset -> batches drawn (input position included); under State::mutex. In process: set
  // when the iterator is made and counted by its thread; remote: the last answer's count.
  std::map<int64_t, int64_t> drawn;
};

// A closure handed to a worker; `dispatch` tells this hand-over from a later one of the same
// closure (after a rescheduling), so a late answer of a lost worker is ignored.
struct Running {
  std::shared_ptr<Closure> closure;
  int worker = -1;
  uint64_t dispatch = 0;
};

struct State : StepDatasets {
  ClusterCoordinatorOptions options;
  mutable std::mutex mutex;
  std::condition_variable changed;
  std::map<std::string, RemoteStepFn> steps;
  std::vector<PerWorkerDatasetFn> datasets;
  std::deque<std::shared_ptr<Closure>> queue;
  std::map<uint64_t, Running> running;  // step id -> closure sent to a worker
  uint64_t dispatches = 0;
  std::vector<WorkerSlot> workers;
  int in_flight = 0;
  uint64_t next_step_id = 1;
  int64_t rescheduled = 0;
  std::exception_ptr pending_error;  // first non-retryable error, raised by the next API call
  bool stopping = false;
  caf::actor service;                             // ClusterCoordinator::set_service
  std::function<void(int, int64_t)> worker_lost;  // ClusterCoordinator::on_worker_lost

  int live_locked() const {
    int n = 0;
    for (auto& w : workers) n += w.alive ? 1 : 0;
    return n;
  }

  void finish_locked(Closure& c, std::vector<Tensor> outputs, std::exception_ptr error, int w) {
    c.outputs = std::move(outputs);
    c.error = error;
    c.worker = w;
    c.finished = true;
  }

  // Runs closure `step_id` on worker `w`'s thread.
  void run(int w, uint64_t step_id) {
    std::shared_ptr<Closure> c;
    RemoteStepFn fn;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = running.find(step_id);
      if (it == running.end()) return;
      c = it->second.closure;
      ++c->attempts;
      fn = steps.at(c->step);
    }
    std::vector<Tensor> outputs;
    std::exception_ptr error;
    caf::actor svc;
    {
      std::lock_guard<std::mutex> lock(mutex);
      svc = service;
    }
    try {
      ScopedStepId id(step_id);
      StepContext ctx(this, w, step_id, c->attempts, svc);
      outputs = fn(ctx, c->args);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mutex);
    finish_locked(*c, std::move(outputs), error, w);
    if (error && !pending_error) pending_error = error;
    changed.notify_all();
  }

  // The closure handed over as `dispatch`, if it is still out (not answered, not rescheduled).
  Running* still_running_locked(uint64_t step_id, uint64_t dispatch) {
    auto it = running.find(step_id);
    return it != running.end() && it->second.dispatch == dispatch ? &it->second : nullptr;
  }

  // Takes closure `step_id` back from its worker (answered or lost).
  void take_back_locked(uint64_t step_id) {
    auto it = running.find(step_id);
    --workers[size_t(it->second.worker)].in_flight;
    --in_flight;
    running.erase(it);
  }

  // Worker `w` went away: the closures it had not answered run again elsewhere, first, with
  // the same step ids, so shards that saw part of one apply the rest once.
  void lose_worker_locked(int w) {
    workers[size_t(w)].alive = false;
    std::vector<uint64_t> lost;
    for (auto& r : running)
      if (r.second.worker == w && !r.second.closure->finished) lost.push_back(r.first);
    for (auto it = lost.rbegin(); it != lost.rend(); ++it) {
      auto c = running.at(*it).closure;
      take_back_locked(*it);
      queue.push_front(c);
      ++rescheduled;
    }
    if (worker_lost && !lost.empty()) worker_lost(w, int64_t(lost.size()));
  }

  std::vector<Tensor> next(int w, int64_t dataset) override {
    WorkerSlot& slot = workers.at(size_t(w));
    auto it = slot.iterators.find(dataset);
    if (it == slot.iterators.end()) {
      PerWorkerDatasetFn make;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (dataset < 0 || dataset >= int64_t(datasets.size()))
          throw invalid_argument("per-worker dataset " + std::to_string(dataset) +
                                 " was not created by this coordinator");
        make = datasets[size_t(dataset)];
      }
      ElementFn fresh = make(w);
      int64_t position = 0;
      {
        std::lock_guard<std::mutex> lock(mutex);
        position = slot.drawn[dataset];
      }
      skip_drawn_batches(fresh, dataset, w, position);
      it = slot.iterators.emplace(dataset, std::move(fresh)).first;
    }
    auto element = it->second();
    std::lock_guard<std::mutex> lock(mutex);
    ++slot.drawn[dataset];
    return element;
  }
};

}  // namespace cluster_detail

using cluster_detail::Closure;
using cluster_detail::Running;
using cluster_detail::State;

std::vector<Tensor> StepContext::next(const PerWorkerDataset& dataset) {
  return datasets_->next(worker_, dataset.id());
}

std::vector<Tensor> StepContext::next(int64_t dataset_id) {
  return datasets_->next(worker_, dataset_id);
}

namespace {

caf::behavior worker_actor(caf::event_based_actor*, std::shared_ptr<State> state, int index) {
  return {[state, index](run_closure_atom, uint64_t step_id) {
    state->run(index, step_id);
    return true;
  }};
}

bool is_worker_loss(const caf::error& e) {
  return e == caf::sec::request_receiver_down || e.category() == caf::atom("exit");
}

void dispatch(caf::event_based_actor* self, const std::shared_ptr<State>& state);

// A worker answered closure `id` (handed over as `serial`) with outputs.
// `drawn`: a remote worker's batch counts by dataset id (none for an in-process worker).
void on_answer(caf::event_based_actor* self, const std::shared_ptr<State>& state, uint64_t id,
               uint64_t serial, std::vector<Tensor>* outputs,
               const std::vector<int64_t>& drawn = {}) {
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    if (Running* r = state->still_running_locked(id, serial)) {
      // A remote worker's outputs arrive here; an in-process worker finished the closure itself.
      if (outputs) state->finish_locked(*r->closure, std::move(*outputs), nullptr, r->worker);
      // A host runs its closures one after another, so its counts only grow; answers that
      // arrive out of order cannot move them back.
      auto& counts = state->workers[size_t(r->worker)].drawn;
      for (size_t d = 0; d < drawn.size(); ++d)
        counts[int64_t(d)] = std::max(counts[int64_t(d)], drawn[d]);
      state->take_back_locked(id);
    }
    state->changed.notify_all();
  }
  dispatch(self, state);
}

// A worker failed closure `id`: lost with its worker (run it elsewhere), or the step's error.
void on_failure(caf::event_based_actor* self, const std::shared_ptr<State>& state, uint64_t id,
                uint64_t serial, const caf::error& e) {
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    if (Running* r = state->still_running_locked(id, serial)) {
      const int w = r->worker;
      auto c = r->closure;
      if (c->finished) {
        state->take_back_locked(id);
      } else if (is_worker_loss(e)) {
        state->lose_worker_locked(w);
      } else {
        state->take_back_locked(id);
        const Status status = to_status(e);
        auto error = std::make_exception_ptr(
            state->workers[size_t(w)].remote
                ? Error(status.code(), "worker " + std::to_string(w) + " failed step '" + c->step +
                                           "' (step id " + std::to_string(id) +
                                           "): " + status.message())
                : internal_error("worker " + std::to_string(w) + " failed step '" + c->step +
                                 "' (step id " + std::to_string(id) + "): " + caf::to_string(e)));
        state->finish_locked(*c, {}, error, w);
        if (!state->pending_error) state->pending_error = error;
      }
    }
    state->changed.notify_all();
  }
  dispatch(self, state);
}

// Sends queued closures to live workers with room, idle ones first.
void dispatch(caf::event_based_actor* self, const std::shared_ptr<State>& state) {
  for (;;) {
    std::shared_ptr<Closure> c;
    int chosen = -1;
    caf::actor target;
    bool remote = false;
    uint64_t serial = 0;
    caf::actor service;
    {
      std::lock_guard<std::mutex> lock(state->mutex);
      if (state->queue.empty() || state->stopping) return;
      for (size_t w = 0; w < state->workers.size(); ++w) {
        auto& slot = state->workers[w];
        if (!slot.alive || slot.in_flight >= state->options.max_in_flight_per_worker) continue;
        if (chosen < 0 || slot.in_flight < state->workers[size_t(chosen)].in_flight)
          chosen = int(w);
      }
      if (chosen < 0) return;
      c = state->queue.front();
      state->queue.pop_front();
      serial = ++state->dispatches;
      state->running[c->step_id] = {c, chosen, serial};
      ++state->workers[size_t(chosen)].in_flight;
      ++state->in_flight;
      target = state->workers[size_t(chosen)].actor;
      remote = state->workers[size_t(chosen)].remote;
      // An in-process worker counts its own start; a remote one is counted when sent.
      if (remote) ++c->attempts;
      service = state->service;
    }
    const uint64_t id = c->step_id;
    if (!remote) {
      self->request(target, caf::infinite, run_closure_atom::value, id)
          .then(
              [self, state, id, serial](bool) { on_answer(self, state, id, serial, nullptr); },
              [self, state, id, serial](caf::error& e) { on_failure(self, state, id, serial, e); });
      continue;
    }
    ps_run_step_msg msg{c->step, id, int32_t(c->attempts), c->args, service};
    self->request(target, caf::infinite, std::move(msg))
        .then(
            [self, state, id, serial](ps_step_done_msg& done) {
              on_answer(self, state, id, serial, &done.outputs, done.batches_drawn);
            },
            [self, state, id, serial](caf::error& e) { on_failure(self, state, id, serial, e); });
  }
}

caf::behavior dispatcher_actor(caf::event_based_actor* self, std::shared_ptr<State> state) {
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    for (auto& w : state->workers) self->monitor(w.actor);
  }
  self->set_down_handler([self, state](caf::down_msg& dm) {
    {
      std::lock_guard<std::mutex> lock(state->mutex);
      for (size_t w = 0; w < state->workers.size(); ++w) {
        auto& slot = state->workers[w];
        if (!slot.actor || slot.actor.address() != dm.source) continue;
        // A remote worker's answers are lost with its connection: take its closures back now.
        // An in-process worker's pending requests come back as request_receiver_down.
        if (slot.remote)
          state->lose_worker_locked(int(w));
        else
          slot.alive = false;
      }
      state->changed.notify_all();
    }
    dispatch(self, state);
  });
  return {[self, state](dispatch_atom) { dispatch(self, state); }};
}

// Cancels every queued closure (R-V2-ERR-2 c).
void cancel_queued_locked(State& s, const std::string& why) {
  for (auto& c : s.queue)
    s.finish_locked(
        *c, {},
        std::make_exception_ptr(Error(Code::cancelled, "step '" + c->step + "' (step id " +
                                                           std::to_string(c->step_id) +
                                                           ") was cancelled: " + why)),
        -1);
  s.queue.clear();
  s.changed.notify_all();
}

// R-V2-ERR-2: waits until nothing runs, cancels the queue, clears and throws the error.
void raise_pending_locked(State& s, std::unique_lock<std::mutex>& lock) {
  if (!s.pending_error) return;
  s.changed.wait(lock, [&] { return s.in_flight == 0; });
  auto error = s.pending_error;
  s.pending_error = nullptr;
  cancel_queued_locked(s, "an earlier step failed");
  std::rethrow_exception(error);
}

Error no_workers_left(const State& s) {
  return unavailable("every worker of the cluster coordinator is gone; " +
                     std::to_string(s.queue.size()) + " scheduled step(s) cannot run");
}

}  // namespace

namespace {

// Checks the options; `remote` (may be empty) are the workers when given.
ClusterCoordinatorOptions checked(ClusterCoordinatorOptions options,
                                  const std::vector<caf::actor>& remote) {
  for (size_t w = 0; w < remote.size(); ++w)
    if (!remote[w])
      throw invalid_argument("ClusterCoordinator: remote worker " + std::to_string(w) +
                             " is not a valid actor handle");
  if (options.num_workers < 1)
    throw invalid_argument("ClusterCoordinator: num_workers must be at least 1, got " +
                           std::to_string(options.num_workers));
  if (options.max_in_flight_per_worker < 1)
    throw invalid_argument("ClusterCoordinator: max_in_flight_per_worker must be at least 1, got " +
                           std::to_string(options.max_in_flight_per_worker));
  if (options.first_step_id < 1)
    throw invalid_argument("ClusterCoordinator: first_step_id must be at least 1 (0 means none)");
  return options;
}

ClusterCoordinatorOptions with_workers(ClusterCoordinatorOptions options,
                                       const std::vector<caf::actor>& remote) {
  if (remote.empty()) throw invalid_argument("ClusterCoordinator: no remote worker was given");
  options.num_workers = int(remote.size());
  return options;
}

}  // namespace

ClusterCoordinator::ClusterCoordinator(caf::actor_system& system, ClusterCoordinatorOptions options)
    : system_(&system), state_(std::make_shared<State>()) {
  state_->options = checked(options, {});
  state_->next_step_id = options.first_step_id;
  state_->workers.resize(size_t(options.num_workers));
  for (int w = 0; w < options.num_workers; ++w)
    state_->workers[size_t(w)].actor = system.spawn<caf::detached>(worker_actor, state_, w);
  dispatcher_ = system.spawn(dispatcher_actor, state_);
}

ClusterCoordinator::ClusterCoordinator(caf::actor_system& system,
                                       std::vector<caf::actor> remote_workers,
                                       ClusterCoordinatorOptions options)
    : system_(&system), state_(std::make_shared<State>()) {
  state_->options = checked(with_workers(options, remote_workers), remote_workers);
  state_->next_step_id = options.first_step_id;
  state_->workers.resize(remote_workers.size());
  for (size_t w = 0; w < remote_workers.size(); ++w) {
    state_->workers[w].actor = std::move(remote_workers[w]);
    state_->workers[w].remote = true;
  }
  dispatcher_ = system.spawn(dispatcher_actor, state_);
}

ClusterCoordinator::~ClusterCoordinator() {
  std::vector<caf::actor> workers;
  {
    std::unique_lock<std::mutex> lock(state_->mutex);
    state_->stopping = true;
    cancel_queued_locked(*state_, "the cluster coordinator was destroyed");
    // Steps refer to what their owner holds: wait until none runs.
    state_->changed.wait(lock, [&] { return state_->in_flight == 0; });
    // Remote workers belong to their processes: whoever connected them stops them.
    for (auto& w : state_->workers)
      if (!w.remote) workers.push_back(w.actor);
  }
  caf::anon_send_exit(dispatcher_, caf::exit_reason::user_shutdown);
  for (auto& w : workers) caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
}

void ClusterCoordinator::register_step(const std::string& name, RemoteStepFn fn) {
  if (name.empty() || !fn)
    throw invalid_argument("ClusterCoordinator: a step needs a name and a function");
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (!state_->steps.emplace(name, std::move(fn)).second)
    throw invalid_argument("ClusterCoordinator: step '" + name + "' is already registered");
}

RemoteValue ClusterCoordinator::schedule(const std::string& name, std::vector<Tensor> args) {
  std::shared_ptr<Closure> c;
  {
    std::unique_lock<std::mutex> lock(state_->mutex);
    if (!state_->steps.count(name)) {
      std::string known;
      for (auto& s : state_->steps) known += (known.empty() ? "" : ", ") + s.first;
      throw invalid_argument("ClusterCoordinator: no step named '" + name + "' (registered: " +
                             (known.empty() ? std::string("none") : known) + ")");
    }
    raise_pending_locked(*state_, lock);
    c = std::make_shared<Closure>();
    c->step_id = state_->next_step_id++;
    c->step = name;
    c->args = std::move(args);
    state_->queue.push_back(c);
  }
  caf::anon_send(dispatcher_, dispatch_atom::value);
  return RemoteValue(state_, c);
}

void ClusterCoordinator::join() {
  std::unique_lock<std::mutex> lock(state_->mutex);
  state_->changed.wait(lock, [&] {
    return state_->pending_error || (state_->queue.empty() && state_->in_flight == 0) ||
           (state_->in_flight == 0 && state_->live_locked() == 0);
  });
  raise_pending_locked(*state_, lock);
  if (!state_->queue.empty()) throw no_workers_left(*state_);
}

bool ClusterCoordinator::done() {
  std::unique_lock<std::mutex> lock(state_->mutex);
  raise_pending_locked(*state_, lock);
  return state_->queue.empty() && state_->in_flight == 0;
}

std::vector<std::vector<Tensor>> ClusterCoordinator::fetch(const std::vector<RemoteValue>& values) {
  std::vector<std::vector<Tensor>> out;
  for (auto& v : values) out.push_back(v.fetch());
  return out;
}

PerWorkerDataset ClusterCoordinator::create_per_worker_dataset(PerWorkerDatasetFn fn) {
  if (!fn) throw invalid_argument("create_per_worker_dataset needs a dataset function");
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->datasets.push_back(std::move(fn));
  return PerWorkerDataset(int64_t(state_->datasets.size()) - 1);
}

std::vector<int64_t> ClusterCoordinator::batches_drawn(const PerWorkerDataset& dataset) const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  std::vector<int64_t> out;
  for (auto& w : state_->workers) {
    auto it = w.drawn.find(dataset.id());
    out.push_back(it == w.drawn.end() ? 0 : it->second);
  }
  return out;
}

void ClusterCoordinator::set_input_positions(const PerWorkerDataset& dataset,
                                             const std::vector<int64_t>& batches) {
  std::vector<std::pair<int, caf::actor>> remote;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (batches.size() != state_->workers.size())
      throw invalid_argument("ClusterCoordinator: " + std::to_string(batches.size()) +
                             " input position(s) for " + std::to_string(state_->workers.size()) +
                             " worker(s)");
    for (size_t w = 0; w < batches.size(); ++w) {
      if (batches[w] < 0)
        throw invalid_argument("ClusterCoordinator: worker " + std::to_string(w) +
                               "'s input position " + std::to_string(batches[w]) + " is negative");
      auto& slot = state_->workers[w];
      if (slot.drawn.count(dataset.id()))
        throw failed_precondition("ClusterCoordinator: worker " + std::to_string(w) +
                                  " has drawn from per-worker dataset " +
                                  std::to_string(dataset.id()) +
                                  " or been given its position already; input positions are set "
                                  "once, before the first step");
      if (slot.remote) remote.push_back({int(w), slot.actor});
    }
  }
  // Each remote host answers once its dataset will start there; the counts kept here change
  // only when every host has.
  caf::scoped_actor self{*system_};
  for (auto& [w, host] : remote) {
    caf::error failure;
    timed_request(self, host, std::chrono::seconds(120), input_position_atom::value, dataset.id(),
                  batches[size_t(w)])
        .receive([](bool) {}, [&](caf::error& e) { failure = std::move(e); });
    if (failure)
      throw unavailable("worker " + std::to_string(w) +
                        " was not told where its input resumes (batch " +
                        std::to_string(batches[size_t(w)]) + "): " + to_status(failure).message());
  }
  std::lock_guard<std::mutex> lock(state_->mutex);
  for (size_t w = 0; w < batches.size(); ++w) state_->workers[w].drawn[dataset.id()] = batches[w];
}

int ClusterCoordinator::num_workers() const { return state_->options.num_workers; }

int ClusterCoordinator::live_workers() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->live_locked();
}

caf::actor ClusterCoordinator::worker(int i) const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (i < 0 || i >= int(state_->workers.size()))
    throw out_of_range("worker " + std::to_string(i) + " is not in [0, " +
                       std::to_string(state_->workers.size()) + ")");
  return state_->workers[size_t(i)].actor;
}

int64_t ClusterCoordinator::rescheduled() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->rescheduled;
}

void ClusterCoordinator::set_service(caf::actor service) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->service = std::move(service);
}

void ClusterCoordinator::on_worker_lost(std::function<void(int, int64_t)> fn) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->worker_lost = std::move(fn);
}

bool RemoteValue::ready() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return closure_->finished;
}

std::vector<Tensor> RemoteValue::fetch() const {
  std::unique_lock<std::mutex> lock(state_->mutex);
  state_->changed.wait(lock, [&] {
    return closure_->finished || (state_->in_flight == 0 && state_->live_locked() == 0);
  });
  if (!closure_->finished) throw no_workers_left(*state_);
  if (closure_->error) std::rethrow_exception(closure_->error);
  return closure_->outputs;
}

uint64_t RemoteValue::step_id() const { return closure_->step_id; }

int RemoteValue::worker() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return closure_->worker;
}

int RemoteValue::attempts() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return closure_->attempts;
}

}  // namespace troupe
