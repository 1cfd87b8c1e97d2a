#include "sched/scheduler.h"

#include <algorithm>

#include "core/error.h"

namespace pagoda {
namespace {

const SchedulerConfig& checked(const SchedulerConfig& c) {
  if (c.max_num_batched_tokens < 1) fail("scheduler: max_num_batched_tokens must be >= 1");
  if (c.max_num_seqs < 1) fail("scheduler: max_num_seqs must be >= 1");
  if (c.max_model_len < 2) fail("scheduler: max_model_len must be >= 2");
  if (c.block_size < 1) fail("scheduler: block_size must be >= 1");
  if (c.long_prefill_token_threshold < 0)
    fail("scheduler: long_prefill_token_threshold must be >= 0");
  // With every other request preempted, one request of max_model_len tokens must fit, or
  // the scheduler could preempt forever.
  const int64_t need = (static_cast<int64_t>(c.max_model_len) + c.block_size - 1) / c.block_size;
  if (c.num_kv_blocks - 1 < need) {
    fail("scheduler: KV cache of ", c.num_kv_blocks - 1,
         " usable blocks cannot hold one request of max_model_len ", c.max_model_len, " tokens (",
         need, " blocks of ", c.block_size, ")");
  }
  return c;
}

}  // namespace

struct Scheduler::StepState {
  int token_budget;
  std::vector<Request*> scheduled_running;
  std::vector<Request*> scheduled_new;
  std::vector<Request*> scheduled_resumed;
  std::unordered_map<Request*, std::vector<BlockId>> new_block_ids;
  std::unordered_map<Request*, int> num_scheduled;
  std::vector<RequestId> preempted;
};

Scheduler::Scheduler(const SchedulerConfig& config, BlockHasher hasher)
    : config_(checked(config)),
      kv_({config.num_kv_blocks, config.block_size, config.enable_prefix_caching},
          std::move(hasher)),
      waiting_(make_waiting_queue(config.policy)) {}

void Scheduler::add_request(RequestParams p) {
  if (p.id.empty()) fail("request: id must not be empty");
  if (requests_.count(p.id)) fail("request ", p.id, ": id already in use");
  if (p.prompt_token_ids.empty()) fail("request ", p.id, ": empty prompt");
  if (static_cast<int64_t>(p.prompt_token_ids.size()) >= config_.max_model_len) {
    fail("request ", p.id, ": prompt of ", p.prompt_token_ids.size(),
         " tokens leaves no room to generate within max_model_len ", config_.max_model_len);
  }
  if (p.max_tokens < 1) fail("request ", p.id, ": max_tokens must be >= 1, got ", p.max_tokens);
  for (const TokenId t : p.prompt_token_ids) {
    if (t < 0) fail("request ", p.id, ": negative token id ", t);
  }
  auto r = std::make_unique<Request>(std::move(p), next_arrival_seq_++);
  waiting_->add(r.get());
  const RequestId id = r->id();
  requests_.emplace(id, std::move(r));
}

const Request* Scheduler::find_request(const RequestId& id) const {
  const auto it = requests_.find(id);
  return it == requests_.end() ? nullptr : it->second.get();
}

SchedulerStats Scheduler::stats() const {
  return {num_running_requests(), num_waiting_requests(), kv_.usage(), kv_.prefix_cache_stats(),
          num_preemptions_};
}

bool Scheduler::ends_with_pending_token(const Request& r) const {
  const int num_outputs = r.num_output_tokens() + r.num_output_placeholders;
  return r.num_output_placeholders > 0 &&
         (num_outputs >= r.max_tokens() || r.num_tokens() + r.num_output_placeholders >= config_.max_model_len);
}

int Scheduler::clamp_new_tokens(int num_new_tokens, int token_budget) const {
  if (config_.long_prefill_token_threshold > 0) {
    num_new_tokens = std::min(num_new_tokens, config_.long_prefill_token_threshold);
  }
  return std::min(num_new_tokens, token_budget);
}

Request* Scheduler::preempt_one(StepState& step) {
  Request* victim = preemption_victim(config_.policy, running_);
  running_.erase(std::find(running_.begin(), running_.end(), victim));
  // A victim already scheduled in this step gives its tokens back.
  const auto it = step.num_scheduled.find(victim);
  if (it != step.num_scheduled.end()) {
    step.token_budget += it->second;
    step.num_scheduled.erase(it);
    step.new_block_ids.erase(victim);
    auto& sr = step.scheduled_running;
    sr.erase(std::find(sr.begin(), sr.end(), victim));
  }
  kv_.free(victim->id());
  victim->status = RequestStatus::Preempted;
  victim->num_computed_tokens = 0;
  ++victim->num_preemptions;
  ++num_preemptions_;
  waiting_->add_preempted(victim);
  step.preempted.push_back(victim->id());
  return victim;
}

void Scheduler::schedule_running(StepState& step) {
  size_t i = 0;
  while (i < running_.size() && step.token_budget > 0) {
    Request* r = running_[i];
    const int num_new = ends_with_pending_token(*r)
                            ? 0
                            : clamp_new_tokens(r->num_tokens() + r->num_output_placeholders - r->num_computed_tokens,
                                               step.token_budget);
    if (num_new == 0) {  // waiting for its sampled token
      ++i;
      continue;
    }
    bool scheduled = true;
    std::optional<KVBlocks> blocks;
    while (!(blocks = kv_.allocate_slots(r->kv_view(), num_new))) {
      const Request* victim = preempt_one(step);
      if (victim == r) {
        scheduled = false;
        break;
      }
      // The victim may have stood before r in running_ (priority policy): find r again.
      i = static_cast<size_t>(std::find(running_.begin(), running_.end(), r) - running_.begin());
    }
    if (!scheduled) break;
    step.scheduled_running.push_back(r);
    step.new_block_ids[r] = blocks->ids();
    step.num_scheduled[r] = num_new;
    step.token_budget -= num_new;
    ++i;
  }
}

void Scheduler::schedule_waiting(StepState& step) {
  while (!waiting_->empty() && step.token_budget > 0 &&
         static_cast<int>(running_.size()) < config_.max_num_seqs) {
    Request* r = waiting_->front();
    PAGODA_CHECK(r->num_computed_tokens == 0);
    // Preempted (async) while a token of its was being sampled: it resumes with that token.
    if (r->num_output_placeholders > 0) break;
    const ComputedBlocks hit =
        r->reads_prefix_cache() ? kv_.get_computed_blocks(r->kv_view()) : ComputedBlocks{};
    const int num_new =
        clamp_new_tokens(r->num_tokens() - hit.num_computed_tokens, step.token_budget);
    const auto blocks =
        kv_.allocate_slots(r->kv_view(), num_new, hit.num_computed_tokens, hit.blocks);
    if (!blocks) break;  // head-of-line: later requests wait too, keeping the policy's order
    waiting_->pop_front();
    running_.push_back(r);
    (r->status == RequestStatus::Preempted ? step.scheduled_resumed : step.scheduled_new)
        .push_back(r);
    r->status = RequestStatus::Running;
    r->num_computed_tokens = hit.num_computed_tokens;
    step.num_scheduled[r] = num_new;
    step.token_budget -= num_new;
  }
}

SchedulerOutput Scheduler::schedule() {
  StepState step{config_.max_num_batched_tokens, {}, {}, {}, {}, {}, {}};
  schedule_running(step);
  // After a preemption memory is short: admitting more would only preempt again.
  if (step.preempted.empty()) schedule_waiting(step);

  SchedulerOutput out;
  for (Request* r : step.scheduled_new) {
    out.scheduled_new_reqs.push_back({r->id(),
                                      {r->prompt_token_ids().begin(), r->prompt_token_ids().end()},
                                      kv_.block_ids(r->id()),
                                      r->num_computed_tokens});
  }
  for (Request* r : step.scheduled_running) {
    out.scheduled_cached_reqs.push_back(
        {r->id(), false, {}, std::move(step.new_block_ids[r]), r->num_computed_tokens});
  }
  for (Request* r : step.scheduled_resumed) {
    out.scheduled_cached_reqs.push_back(
        {r->id(), true, r->all_token_ids(), kv_.block_ids(r->id()), r->num_computed_tokens});
  }
  for (auto& [r, n] : step.num_scheduled) {
    out.num_scheduled_tokens.emplace(r->id(), n);
    out.total_num_scheduled_tokens += n;
    // The runner computes these in this step; the next schedule() builds on them.
    r->num_computed_tokens += n;
    // Async: the token this step samples is the next one to schedule, before it is known.
    if (config_.async_scheduling && r->num_computed_tokens == r->num_tokens() + r->num_output_placeholders) {
      ++r->num_output_placeholders;
    }
  }
  PAGODA_CHECK(out.total_num_scheduled_tokens <= config_.max_num_batched_tokens);
  out.preempted_req_ids = std::move(step.preempted);
  out.preempted_req_ids.insert(out.preempted_req_ids.end(), recomputed_since_last_step_.begin(),
                               recomputed_since_last_step_.end());
  recomputed_since_last_step_.clear();
  out.finished_req_ids = std::move(finished_since_last_step_);
  finished_since_last_step_.clear();
  return out;
}

}  // namespace pagoda
