#include "engine/engine_core.h"

#include <chrono>

#include <algorithm>

#include "core/error.h"

namespace pagoda {

EngineCore::EngineCore(Model& model, Backend& backend, const Tokenizer& tokenizer,
                       const EngineOptions& options)
    : tokenizer_(tokenizer), processor_(tokenizer) {
  EngineOptions resolved = with_kv_cache_memory(options, backend, model.spec());
  if (!resolved.async_scheduling) resolved.async_scheduling = backend.can_sample_async();
  const SchedulerConfig config = make_scheduler_config(resolved, model.spec(), backend.kv_cache_dtype());
  limits_.vocab_size = model.spec().vocab_size;
  limits_.max_tokens = config.max_model_len;
  for (int32_t t = 0; t < tokenizer.vocab_size(); ++t) {
    if (tokenizer.is_end_of_generation(t)) eos_ids_.push_back(t);
  }
  async_ = config.async_scheduling;
  scheduler_ = std::make_unique<Scheduler>(config);
  DecodeGraphOptions graphs;
  if (!options.enforce_eager) graphs = {config.max_num_seqs, config.max_model_len};
  runner_ = std::make_unique<ModelRunner>(model, backend, config.num_kv_blocks, config.block_size, graphs);
}

SamplingParams EngineCore::prepare(const RequestId& id, const std::vector<int32_t>& prompt_ids,
                                   SamplingParams params) const {
  if (id.empty()) fail("request: id must not be empty");
  params.eos_token_ids = eos_ids_;
  params.validate(limits_);
  if (!params.bad_words.empty()) {
    params.tokenize_bad_words([this](std::string_view w) { return tokenizer_.encode(w, false); }, limits_);
  }
  if (prompt_ids.empty()) fail("request ", id, ": empty prompt");
  for (const int32_t t : prompt_ids) {
    if (t < 0 || t >= limits_.vocab_size) fail("request ", id, ": prompt token id ", t, " is out of vocabulary");
  }
  const int max_model_len = scheduler_->config().max_model_len;
  if (static_cast<int64_t>(prompt_ids.size()) >= max_model_len) {
    fail("request ", id, ": prompt of ", prompt_ids.size(), " tokens leaves no room to generate within max_model_len ",
         max_model_len);
  }
  return params;
}

void EngineCore::add_request(const RequestId& id, std::vector<int32_t> prompt_ids, SamplingParams params) {
  params = prepare(id, prompt_ids, std::move(params));
  add_prepared_request(id, std::move(prompt_ids), std::move(params));
}

void EngineCore::add_prepared_request(const RequestId& id, std::vector<int32_t> prompt_ids, SamplingParams params) {
  const auto arrival = OutputProcessor::Clock::now();
  for (const RequestId& taken : ParallelSampling::ids_taken_by(id, params.n)) {
    if (setups_.count(taken) || parallel_.reserves(taken)) fail("request ", taken, ": id already in use");
  }
  if (params.n == 1) return add_one(id, std::move(prompt_ids), std::move(params), arrival);
  // Holding back all but the first child pays off only when there are full prompt blocks
  // to find cached (the last prompt token is always computed).
  const SchedulerConfig& c = scheduler_->config();
  const bool share = c.enable_prefix_caching && (static_cast<int>(prompt_ids.size()) - 1) / c.block_size >= 1;
  try {
    for (ChildRequest& child : parallel_.fan_out(id, std::move(prompt_ids), params, share, arrival)) {
      add_one(child.id, std::move(child.prompt_ids), std::move(child.params), child.arrival);
    }
  } catch (...) {
    abort(id);  // all or nothing
    throw;
  }
}

void EngineCore::add_one(const RequestId& id, std::vector<int32_t> prompt_ids, SamplingParams params,
                         OutputProcessor::Clock::time_point arrival) {
  if (setups_.count(id)) fail("request ", id, ": id already in use");
  for (const SchedulerOutput& step : in_flight_) {
    if (step.num_scheduled_tokens.count(id)) fail("request ", id, ": id already in use (by a step still computing)");
  }
  const int max_model_len = scheduler_->config().max_model_len;
  RequestParams rp;
  rp.id = id;
  rp.max_tokens = static_cast<int>(std::clamp<int64_t>(
      params.max_tokens.value_or(max_model_len - static_cast<int64_t>(prompt_ids.size())), 1, max_model_len));
  rp.stop_token_ids = params.stop_token_ids;
  if (!params.ignore_eos) rp.stop_token_ids.insert(rp.stop_token_ids.end(), eos_ids_.begin(), eos_ids_.end());
  const int num_prompt = static_cast<int>(prompt_ids.size());
  rp.prompt_token_ids = std::move(prompt_ids);
  rp.read_prefix_cache = !params.prompt_logprobs;  // every prompt row's logits are needed
  scheduler_->add_request(std::move(rp));  // the last check that can fail
  const uint64_t key = Rng(params.seed).key();
  processor_.add_request(id, params, arrival);
  setups_.emplace(id, RunnerRequestSetup{std::move(params), num_prompt, key});
}

void EngineCore::abort(const RequestId& id) {
  if (parallel_.is_parent(id)) {
    for (const RequestId& child : parallel_.abort(id, pending_)) abort_one(child);
    return;
  }
  abort_one(id);
}

void EngineCore::abort_one(const RequestId& id) {
  if (!setups_.count(id)) return;
  const RequestId ids[] = {id};
  scheduler_->finish_requests(ids, RequestStatus::FinishedAborted);
  pending_.push_back(processor_.abort(id));
  setups_.erase(id);
}

RunnerRequestSetup EngineCore::setup_of(const RequestId& id) const {
  const auto it = setups_.find(id);
  if (it == setups_.end()) fail("engine: the scheduler ran unknown request ", id);
  return it->second;
}

std::vector<RequestOutput> EngineCore::step() {
  using Clock = std::chrono::steady_clock;
  const auto seconds = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); };
  const auto t0 = Clock::now();
  SchedulerOutput out = scheduler_->schedule();
  const auto now = OutputProcessor::Clock::now();
  for (const NewRequestData& n : out.scheduled_new_reqs) processor_.mark_scheduled(n.id, now);
  const auto t1 = Clock::now();
  runner_->launch(out, [this](const RequestId& id) { return setup_of(id); }, async_);
  const auto t2 = Clock::now();
  const bool computes = out.total_num_scheduled_tokens > 0;
  in_flight_.push_back(std::move(out));
  std::vector<RequestOutput> outputs = std::move(pending_);
  pending_.clear();
  // Async, the step just launched computes while the one before it is finished here; it is
  // finished at once when nothing else is in flight to overlap with, or it computes nothing.
  while (in_flight_.size() > 1 || (!in_flight_.empty() && (!async_ || !computes))) finish_step(outputs);
  // Children of an n > 1 request answer under its id; a finished child may release the rest.
  std::vector<ChildRequest> released;
  for (RequestOutput& o : outputs) parallel_.to_parent(o, released);
  for (ChildRequest& c : released) add_one(c.id, std::move(c.prompt_ids), std::move(c.params), c.arrival);
  const auto t3 = Clock::now();
  times_.schedule_s += seconds(t0, t1);
  times_.execute_s += seconds(t1, t2);
  times_.update_s += seconds(t2, t3);
  ++times_.num_steps;
  return outputs;
}

void EngineCore::finish_step(std::vector<RequestOutput>& outputs) {
  const RunnerOutput run = runner_->collect();
  const SchedulerOutput out = std::move(in_flight_.front());
  in_flight_.pop_front();
  for (const RequestId& id : run.recompute) {  // the device handed their draws back
    scheduler_->recompute(id);
    const auto it = setups_.find(id);
    if (it != setups_.end()) it->second.sample_synchronously = true;
  }
  const std::vector<FinishedRequest> finished = scheduler_->update_from_output(out, run.sampled);
  std::vector<RequestOutput> processed = process(run, finished);
  outputs.insert(outputs.end(), std::make_move_iterator(processed.begin()), std::make_move_iterator(processed.end()));
}

std::vector<RequestOutput> EngineCore::process(const RunnerOutput& run,
                                               const std::vector<FinishedRequest>& finished) {
  std::vector<RequestOutput> outputs;
  for (const auto& [id, chunk] : run.prompt_logprobs) processor_.add_prompt_logprobs(id, chunk);
  std::unordered_map<RequestId, RequestStatus> status;
  for (const FinishedRequest& f : finished) status.emplace(f.id, f.status);
  std::vector<RequestId> ids;
  for (const auto& [id, tokens] : run.sampled) ids.push_back(id);
  for (const FinishedRequest& f : finished) {
    if (!run.sampled.count(f.id)) ids.push_back(f.id);
  }
  std::sort(ids.begin(), ids.end());
  std::vector<RequestId> stopped;  // by a stop string: the scheduler does not know yet
  for (const RequestId& id : ids) {
    if (!processor_.has_request(id)) continue;
    const auto s = status.find(id);
    const auto t = run.sampled.find(id);
    const auto l = run.logprobs.find(id);
    RequestOutput delta = processor_.process(
        id, t == run.sampled.end() ? std::span<const int32_t>() : std::span<const int32_t>(t->second),
        l == run.logprobs.end() ? std::span<const TokenLogprobs>() : std::span<const TokenLogprobs>(l->second),
        s == status.end() ? std::nullopt : std::optional<RequestStatus>(s->second));
    if (delta.finished) {
      if (s == status.end()) stopped.push_back(id);
      setups_.erase(id);
    }
    outputs.push_back(std::move(delta));
  }
  scheduler_->finish_requests(stopped, RequestStatus::FinishedStopped);
  return outputs;
}

bool EngineCore::has_unfinished_requests() const {
  return scheduler_->has_unfinished_requests() || runner_->num_requests() > 0 || !pending_.empty() ||
         !in_flight_.empty();
}

}  // namespace pagoda
