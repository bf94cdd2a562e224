#include "coordinator/distributed_iterator.hpp"

#include <cstring>
#include <deque>
#include <utility>

#include <caf/all.hpp>

#include "actors/dataset_iterator.hpp"
#include "coordinator/context.hpp"
#include "coordinator/device_inventory.hpp"
#include "coordinator/strategy.hpp"
#include "core/crc32c.hpp"
#include "core/data/partial_batch.hpp"
#include "core/device_spec.hpp"
#include "core/status.hpp"
#include "messages/error_channel.hpp"
#include "messages/input_messages.hpp"
#include "messages/timed_request.hpp"

namespace troupe {
namespace {

constexpr char kStateMagic[4] = {'T', 'D', 'I', 'S'};

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}

uint64_t get_u64(std::string_view in, size_t& pos) {
  if (in.size() - pos < 8) throw data_loss("distributed iterator state: truncated");
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(uint8_t(in[pos + size_t(i)])) << (8 * i);
  pos += 8;
  return v;
}

// A failed request to an input worker: gone (actor down) or silent (timeout).
Error worker_unreachable(caf::actor_system& system, size_t worker, const char* what,
                         const caf::error& err) {
  Status status = to_status(err);
  std::string text = "input worker " + std::to_string(worker) + " did not answer " + what + ": " +
                     status.message();
  if (status.code() == Code::deadline_exceeded) return deadline_exceeded(text);
  return unavailable(text);
}

}  // namespace

struct DistributedIterator::Impl {
  caf::actor_system* system;
  DistributedIteratorConfig config;
  std::vector<caf::actor> workers;
  std::unique_ptr<caf::scoped_actor> self;
  uint64_t step = 0;
  bool ended = false;
  using PullHandle = decltype(timed_request(
      std::declval<caf::scoped_actor&>(), std::declval<const caf::actor&>(),
      std::declval<const InputOptions&>().request_timeout, std::declval<input_pull_msg>()));
  // Pulls sent and not yet taken, step-major: [k * workers + w] is worker w's pull of step k.
  std::deque<PullHandle> in_flight;

  Impl(caf::actor_system& sys, DistributedIteratorConfig cfg)
      : system(&sys), config(std::move(cfg)) {
    self = std::make_unique<caf::scoped_actor>(sys);
    DatasetIteratorOptions options;
    options.replicas = int32_t(config.replicas_per_worker);
    options.buffer_steps = config.options.experimental_per_replica_buffer_size;
    try {
      for (size_t w = 0; w < config.worker_datasets.size(); ++w) {
        options.place = placement(w);
        if (options.place) options.to_host = [](const Tensor& t) { return troupe::to_host(t); };
        workers.push_back(spawn_dataset_iterator(sys, config.worker_datasets[w], options));
      }
    } catch (...) {
      stop();
      throw;
    }
  }

  ~Impl() { stop(); }

  // experimental_fetch_to_device: input worker `w`'s reader thread copies each replica's
  // element to that replica's GPU as it reads ahead, so a step starts with its batch already
  // there. Nothing to do where every replica of the worker computes in host memory.
  std::function<void(std::vector<data::Element>&)> placement(size_t w) const {
    if (!config.options.experimental_fetch_to_device) return {};
    const auto first = config.devices.begin() + std::ptrdiff_t(w) * config.replicas_per_worker;
    std::vector<std::string> devices(first, first + config.replicas_per_worker);
    bool any_gpu = false;
    for (auto& d : devices) any_gpu = any_gpu || gpu_ordinal(d) >= 0;
    if (!any_gpu) return {};
    return [devices](std::vector<data::Element>& elements) {
      for (size_t r = 0; r < elements.size() && r < devices.size(); ++r)
        for (Tensor& t : elements[r]) t = fetch_to_device(t, devices[r]);
    };
  }

  void stop() {
    for (auto& w : workers) caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
    workers.clear();
  }

  // Sends every worker its pulls of the next `count` steps. Each worker's actor serves its pulls
  // in the order they arrive, from what it read ahead: a chunk of steps costs one round trip, not
  // one per step, and pulls sent ahead (prefetch) are answered while the replicas compute.
  void send_pulls(int64_t count) {
    for (int64_t k = 0; k < count; ++k, ++step)
      for (auto& w : workers)
        in_flight.push_back(
            timed_request(*self, w, config.options.request_timeout, input_pull_msg{step}));
  }

  int64_t steps_in_flight() const { return int64_t(in_flight.size() / workers.size()); }

  // The answers of the first `count` steps in flight: result[k][w] is worker w's. Every one of
  // them is taken, also after a failure (an answer left unread would stay in this scoped actor's
  // mailbox); throws when a worker did not answer. Answers that carry a pipeline error are
  // returned as they are (check_answers).
  std::vector<std::vector<input_step_msg>> take_pulls(int64_t count) {
    std::vector<std::vector<input_step_msg>> steps(size_t(count),
                                                   std::vector<input_step_msg>(workers.size()));
    std::optional<Error> failure;
    for (size_t i = 0; i < size_t(count) * workers.size(); ++i) {
      const size_t k = i / workers.size(), w = i % workers.size();
      in_flight.front().receive([&](input_step_msg& m) { steps[k][w] = std::move(m); },
                                [&](caf::error& err) {
                                  if (!failure)
                                    failure = worker_unreachable(*system, w, "a pull", err);
                                });
      in_flight.pop_front();
    }
    if (failure) throw *failure;
    return steps;
  }

  // Throws the first pipeline error or malformed answer among `steps`.
  void check_answers(const std::vector<std::vector<input_step_msg>>& steps) const {
    for (auto& answers : steps)
      for (size_t i = 0; i < answers.size(); ++i) {
        if (answers[i].error_code != 0)
          throw Error(static_cast<Code>(answers[i].error_code), answers[i].error_message);
        if (answers[i].has_data.size() != size_t(config.replicas_per_worker) ||
            answers[i].elements.size() != size_t(config.replicas_per_worker))
          throw internal_error("input worker " + std::to_string(i) + " answered with " +
                               std::to_string(answers[i].has_data.size()) + " replicas, expected " +
                               std::to_string(config.replicas_per_worker));
      }
  }

  // Steps pulled ahead and not handed out go back to the front of their worker's read-ahead, in
  // order, before anything asks the workers for their position: a saved state then holds them,
  // and the position is that of the steps handed out. Messages between two actors arrive in the
  // order sent, so a request sent after this finds them back.
  void return_in_flight() {
    if (in_flight.empty()) return;
    auto answers = take_pulls(steps_in_flight());
    for (size_t w = 0; w < workers.size(); ++w) {
      input_unpull_msg back;
      for (auto& step_answers : answers) back.steps.push_back(std::move(step_answers[w]));
      (*self)->send(workers[w], std::move(back));
    }
  }

  // Takes and drops the answers in flight (a restore replaces the position they came from, and
  // past the end of the data they are empty).
  void drop_in_flight() {
    try {
      take_pulls(steps_in_flight());
    } catch (const Error&) {
      // A worker that did not answer fails the next request to it, with its name.
    }
  }

  void prefetch(int64_t count) {
    if (!ended) send_pulls(count);
  }

  // Spec §2.8.4: get_next runs in its own strategy's scope; another strategy's is an error.
  void check_scope() const {
    const Strategy* current = current_strategy();
    if (config.strategy && current && current != config.strategy)
      throw failed_precondition(
          "get_next: this distributed iterator belongs to another strategy "
          "than the current " +
          current->name() + " scope");
  }

  // Up to `count` steps, taking pulls sent ahead first; fewer only where the data ends (then
  // `ended`).
  std::vector<std::vector<PerReplica>> next_steps(int64_t count) {
    check_scope();
    std::vector<std::vector<PerReplica>> out;
    if (ended || count == 0) return out;
    if (steps_in_flight() < count) send_pulls(count - steps_in_flight());
    auto answers = take_pulls(count);
    check_answers(answers);
    for (auto& step_answers : answers) {
      auto one = assemble(step_answers);
      if (!one) {  // the later answers, and any pulled ahead, are past the end as well
        drop_in_flight();
        break;
      }
      out.push_back(std::move(*one));
    }
    return out;
  }

  std::optional<std::vector<PerReplica>> next() {
    auto steps = next_steps(1);
    if (steps.empty()) return std::nullopt;
    return std::move(steps.front());
  }

  // One step from every worker's answer for it; nullopt (and `ended`) at the end of the data.
  std::optional<std::vector<PerReplica>> assemble(std::vector<input_step_msg>& steps) {
    // The end-of-data decision is collective: the count of every worker's replicas with data.
    std::vector<std::optional<data::Element>> per_replica;
    per_replica.reserve(config.devices.size());
    for (auto& s : steps)
      for (size_t r = 0; r < s.elements.size(); ++r)
        per_replica.push_back(s.has_data[r] ? std::optional<data::Element>(std::move(s.elements[r]))
                                            : std::nullopt);
    std::optional<std::vector<data::Element>> filled;
    if (config.count_across_workers) {
      // Another worker may still have data when this one has none: then every local replica
      // takes an empty batch, so the step (and its collectives) still happens here.
      const int64_t mine = data::count_replicas_with_data(per_replica);
      if (config.count_across_workers(mine) == 0) {
        ended = true;
        return std::nullopt;
      }
      if (mine > 0) {
        filled = data::fill_missing_replicas(per_replica, config.element_spec);
      } else {
        filled = data::empty_replicas(per_replica.size(), config.element_spec);
      }
    } else {
      filled = data::fill_missing_replicas(per_replica, config.element_spec);
      if (!filled) {
        ended = true;
        return std::nullopt;
      }
    }
    size_t components = config.element_spec.size();
    std::vector<PerReplica> out;
    out.reserve(components);
    for (size_t c = 0; c < components; ++c) {
      std::vector<Tensor> values;
      values.reserve(filled->size());
      for (auto& element : *filled) {
        if (element.size() != components)
          throw invalid_argument("distributed iterator: an element has " +
                                 std::to_string(element.size()) + " components, the spec " +
                                 data::spec_to_string(config.element_spec) + " has " +
                                 std::to_string(components));
        values.push_back(element[c]);
      }
      out.emplace_back(std::move(values), config.devices);
    }
    return out;
  }

  std::string save() {
    return_in_flight();
    std::string out(kStateMagic, 4);
    put_u64(out, workers.size());
    put_u64(out, uint64_t(config.replicas_per_worker));
    put_u64(out, ended ? 1 : 0);
    for (size_t i = 0; i < workers.size(); ++i) {
      std::optional<Error> failure;
      input_state_msg reply;
      timed_request(*self, workers[i], config.options.request_timeout, input_save_msg{step})
          .receive([&](input_state_msg& m) { reply = std::move(m); },
                   [&](caf::error& err) { failure = worker_unreachable(*system, i, "save", err); });
      if (failure) throw *failure;
      if (reply.error_code != 0)
        throw Error(static_cast<Code>(reply.error_code),
                    "input worker " + std::to_string(i) + ": " + reply.error_message);
      put_u64(out, reply.state.size());
      out.append(reply.state.data(), reply.state.size());
    }
    put_u64(out, crc32c_mask(crc32c(out)));
    return out;
  }

  void restore(std::string_view bytes) {
    drop_in_flight();
    if (bytes.size() < 4 + 8 * 4 || std::memcmp(bytes.data(), kStateMagic, 4) != 0)
      throw data_loss("distributed iterator state: not a DistributedIterator state (bad magic)");
    size_t end = bytes.size() - 8;
    size_t crc_pos = end;
    if (get_u64(bytes, crc_pos) != crc32c_mask(crc32c(bytes.substr(0, end))))
      throw data_loss("distributed iterator state: checksum mismatch");
    auto body = bytes.substr(0, end);
    size_t pos = 4;
    uint64_t w = get_u64(body, pos), r = get_u64(body, pos);
    bool saved_ended = get_u64(body, pos) != 0;
    if (w != workers.size() || r != uint64_t(config.replicas_per_worker))
      throw invalid_argument("distributed iterator state: saved for " + std::to_string(w) +
                             " input workers x " + std::to_string(r) +
                             " replicas, this iterator has " + std::to_string(workers.size()) +
                             " x " + std::to_string(config.replicas_per_worker));
    std::vector<std::vector<char>> states;
    for (uint64_t i = 0; i < w; ++i) {
      uint64_t n = get_u64(body, pos);
      if (body.size() - pos < n) throw data_loss("distributed iterator state: truncated");
      states.emplace_back(body.data() + pos, body.data() + pos + n);
      pos += size_t(n);
    }
    for (size_t i = 0; i < workers.size(); ++i) {
      std::optional<Error> failure;
      input_state_msg reply;
      timed_request(*self, workers[i], config.options.request_timeout, input_restore_msg{states[i]})
          .receive(
              [&](input_state_msg& m) { reply = std::move(m); },
              [&](caf::error& err) { failure = worker_unreachable(*system, i, "restore", err); });
      if (failure) throw *failure;
      if (reply.error_code != 0)
        throw Error(static_cast<Code>(reply.error_code),
                    "input worker " + std::to_string(i) + ": " + reply.error_message);
    }
    ended = saved_ended;
  }
};

DistributedIterator::DistributedIterator(caf::actor_system& system,
                                         DistributedIteratorConfig config) {
  if (config.worker_datasets.empty())
    throw invalid_argument("distributed iterator: should have at least one input worker");
  if (config.devices.size() != config.worker_datasets.size() * size_t(config.replicas_per_worker))
    throw invalid_argument("distributed iterator: " + std::to_string(config.devices.size()) +
                           " devices for " + std::to_string(config.worker_datasets.size()) +
                           " input workers x " + std::to_string(config.replicas_per_worker) +
                           " replicas");
  impl_ = std::make_unique<Impl>(system, std::move(config));
}

DistributedIterator::~DistributedIterator() = default;
DistributedIterator::DistributedIterator(DistributedIterator&&) noexcept = default;
DistributedIterator& DistributedIterator::operator=(DistributedIterator&&) noexcept = default;

std::vector<PerReplica> DistributedIterator::get_next() {
  auto step = impl_->next();
  if (!step) throw end_of_sequence();
  return std::move(*step);
}

Error DistributedIterator::end_of_sequence() {
  return out_of_range("end of sequence: every replica of every input worker is out of data");
}

std::optional<std::vector<PerReplica>> DistributedIterator::get_next_as_optional() {
  return impl_->next();
}

std::vector<std::vector<PerReplica>> DistributedIterator::get_next_steps(int64_t count) {
  if (count < 0)
    throw invalid_argument("get_next_steps: count must be >= 0, got " + std::to_string(count));
  return impl_->next_steps(count);
}

void DistributedIterator::prefetch_steps(int64_t count) {
  if (count < 0)
    throw invalid_argument("prefetch_steps: count must be >= 0, got " + std::to_string(count));
  impl_->prefetch(count);
}

const data::ElementSpec& DistributedIterator::element_spec() const {
  return impl_->config.element_spec;
}

int64_t DistributedIterator::num_input_workers() const { return int64_t(impl_->workers.size()); }

int64_t DistributedIterator::num_replicas_in_sync() const {
  return int64_t(impl_->config.devices.size()) * impl_->config.num_workers;
}

std::string DistributedIterator::save() { return impl_->save(); }

void DistributedIterator::restore(std::string_view state) { impl_->restore(state); }

const std::vector<caf::actor>& DistributedIterator::input_worker_actors() const {
  return impl_->workers;
}

DistributedStepCursor::DistributedStepCursor(std::shared_ptr<DistributedIterator> iterator)
    : iterator_(std::move(iterator)) {
  ++*this;
}

DistributedStepCursor& DistributedStepCursor::operator++() {
  current_ = iterator_ ? iterator_->get_next_as_optional() : std::nullopt;
  if (!current_) iterator_.reset();  // the actors go as soon as the data ends
  return *this;
}

}  // namespace troupe
