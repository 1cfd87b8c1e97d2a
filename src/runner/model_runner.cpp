#include "runner/model_runner.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "core/error.h"
#include "runner/device_sampling.h"
#include "runner/paged_batch.h"

namespace pagoda {

ModelRunner::ModelRunner(Model& model, Backend& backend, int num_kv_blocks, int block_size,
                         const DecodeGraphOptions& graphs)
    : model_(model),
      backend_(backend),
      cache_(backend, model.spec(), num_kv_blocks, block_size),
      graphs_(model, backend, cache_, graphs) {}

ModelRunner::State ModelRunner::make_state(RunnerRequestSetup s, std::vector<int32_t> tokens,
                                           std::vector<int32_t> blocks, int num_computed) {
  if (s.num_prompt_tokens < 1 || s.num_prompt_tokens > static_cast<int>(tokens.size())) {
    fail("runner: prompt length ", s.num_prompt_tokens, " does not fit ", tokens.size(), " tokens");
  }
  // A greedy request never draws; a sampled one drew once per output token so far, so a
  // resumed request continues its stream where it left off.
  const int num_outputs = static_cast<int>(tokens.size()) - s.num_prompt_tokens;
  const uint64_t counter = s.params.is_greedy() ? 0 : static_cast<uint64_t>(num_outputs);
  State st{std::move(tokens),
           s.num_prompt_tokens,
           std::move(blocks),
           num_computed,
           std::move(s.params),
           Rng::from_state(s.rng_key, counter),
           s.sample_synchronously,
           next_generation_++};
  return st;
}

void ModelRunner::apply(const SchedulerOutput& out, const RunnerSetupFn& setup) {
  for (const RequestId& id : out.finished_req_ids) states_.erase(id);
  for (const RequestId& id : out.preempted_req_ids) states_.erase(id);
  for (const NewRequestData& n : out.scheduled_new_reqs) {
    RunnerRequestSetup s = setup(n.id);
    s.num_prompt_tokens = static_cast<int>(n.prompt_token_ids.size());
    states_.insert_or_assign(n.id, make_state(std::move(s), n.prompt_token_ids, n.block_ids,
                                              n.num_computed_tokens));
  }
  for (const CachedRequestData& c : out.scheduled_cached_reqs) {
    if (c.resumed_from_preemption) {
      states_.insert_or_assign(c.id, make_state(setup(c.id), c.new_token_ids, c.new_block_ids,
                                                c.num_computed_tokens));
      continue;
    }
    const auto it = states_.find(c.id);
    if (it == states_.end()) fail("runner: unknown request ", c.id);
    State& st = it->second;
    st.token_ids.insert(st.token_ids.end(), c.new_token_ids.begin(), c.new_token_ids.end());
    st.block_ids.insert(st.block_ids.end(), c.new_block_ids.begin(), c.new_block_ids.end());
    st.num_computed_tokens = c.num_computed_tokens;
  }
}

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
}  // namespace

RunnerOutput ModelRunner::execute(const SchedulerOutput& out, const RunnerSetupFn& setup) {
  if (!in_flight_.empty()) fail("runner: execute with ", in_flight_.size(), " steps in flight");
  launch(out, setup);
  return collect();
}

void ModelRunner::launch(const SchedulerOutput& out, const RunnerSetupFn& setup, bool may_sample_ahead) {
  if (in_flight_.size() >= 2) fail("runner: a third step launched before the first was collected");
  auto t = Clock::now();
  apply(out, setup);
  InFlight& step = in_flight_.emplace_back();
  if (out.total_num_scheduled_tokens == 0) return;

  // Rows in a fixed order (by id) so that a step's batch does not depend on hash order.
  std::vector<std::pair<const RequestId*, int>> rows;
  for (const auto& [id, n] : out.num_scheduled_tokens) rows.emplace_back(&id, n);
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return *a.first < *b.first; });

  std::vector<SequenceChunk> chunks;
  std::vector<int32_t> ids;
  std::vector<State*> samplers;  // states that sample, in logit-row order
  std::vector<const RequestId*> sampler_ids;
  std::vector<int> sample_chunks;
  std::vector<PromptRows> prompt_rows;
  int32_t batch_row = 0;
  for (const auto& [id, n] : rows) {
    const auto it = states_.find(*id);
    if (it == states_.end()) fail("runner: scheduled request ", *id, " is unknown");
    State& st = it->second;
    const int end = st.num_computed_tokens + n;
    if (n <= 0 || end > static_cast<int>(st.token_ids.size())) {
      fail("runner: request ", *id, " scheduled past its tokens");
    }
    if (st.params.prompt_logprobs) {
      const PositionRange p = prompt_scoring_positions(st.num_computed_tokens, n, st.num_prompt_tokens);
      if (p.size() > 0) prompt_rows.push_back({id, &st, p, batch_row});
    }
    batch_row += n;
    chunks.push_back({st.block_ids, st.num_computed_tokens, n});
    // A placeholder (a token sampled ahead, still on the device) is read there by embedding().
    ids.insert(ids.end(), st.token_ids.begin() + st.num_computed_tokens, st.token_ids.begin() + end);
    // A prefill chunk that stops short of the last token has nothing to sample.
    if (end == static_cast<int>(st.token_ids.size())) {
      samplers.push_back(&st);
      sampler_ids.push_back(id);
      sample_chunks.push_back(static_cast<int>(chunks.size()) - 1);
    }
  }
  // A uniform decode step (one token each, every row samples) replays a graph when one fits.
  const bool uniform_decode = prompt_rows.empty() && samplers.size() == chunks.size() &&
                              std::all_of(chunks.begin(), chunks.end(), [](const SequenceChunk& c) { return c.num_new == 1; });
  std::optional<Tensor> replayed;
  std::vector<int32_t> logit_rows;
  if (uniform_decode) {
    times_.prepare_s += seconds_since(t);
    t = Clock::now();
    replayed = graphs_.run(chunks, ids);
    if (replayed) {
      for (size_t i = 0; i < chunks.size(); ++i) logit_rows.push_back(static_cast<int32_t>(i));
      times_.forward_s += seconds_since(t);
    }
    t = Clock::now();
  }
  Tensor logits;
  if (replayed) {
    logits = std::move(*replayed);
  } else {
    PagedBatch batch(chunks, cache_.block_size());
    for (const int c : sample_chunks) logit_rows.push_back(batch.last_token_rows()[static_cast<size_t>(c)]);
    for (const PromptRows& p : prompt_rows) {
      for (int j = 0; j < p.positions.size(); ++j) logit_rows.push_back(p.first_row + j);
    }
    times_.prepare_s += seconds_since(t);
    t = Clock::now();
    logits = model_.forward({ids, batch.positions(), batch.metadata(), logit_rows}, cache_);
    times_.forward_s += seconds_since(t);
  }
  t = Clock::now();
  for (size_t i = 0; i < chunks.size(); ++i) {
    states_.find(*rows[i].first)->second.num_computed_tokens += chunks[i].num_new;
  }
  if (logit_rows.empty()) return;

  const bool ahead = may_sample_ahead && backend_.can_sample_async() && prompt_rows.empty() &&
                     std::all_of(samplers.begin(), samplers.end(), [](const State* st) {
                       return !st->sample_synchronously && device_can_sample_ahead(st->params);
                     });
  if (ahead) {
    sample_ahead(logits, samplers, sampler_ids, step);
  } else {
    sample_now(logits, logit_rows.size(), samplers, sampler_ids, prompt_rows, step.output);
  }
  times_.sample_s += seconds_since(t);
}

SampleRowSpec ModelRunner::row_spec(size_t logit_row, State& st) {
  const std::span<const int32_t> all(st.token_ids);
  const RowHistory history{all.first(static_cast<size_t>(st.num_prompt_tokens)),
                           all.subspan(static_cast<size_t>(st.num_prompt_tokens))};
  return device_sample_spec(static_cast<int32_t>(logit_row), st.params, history,
                            static_cast<size_t>(model_.spec().vocab_size), st.rng, edit_scratch_, edits_);
}

void ModelRunner::sample_ahead(const Tensor& logits, const std::vector<State*>& samplers,
                               const std::vector<const RequestId*>& sampler_ids, InFlight& step) {
  std::vector<SampleRowSpec> specs;
  edits_.clear();
  for (size_t i = 0; i < samplers.size(); ++i) specs.push_back(row_spec(i, *samplers[i]));
  backend_.sample_async(logits, specs, edits_);
  step.on_device = true;
  for (size_t i = 0; i < samplers.size(); ++i) {
    State& st = *samplers[i];
    step.rows.push_back({*sampler_ids[i], st.generation, st.token_ids.size()});
    st.token_ids.push_back(-static_cast<int32_t>(i) - 1);  // embedding() reads row i's id on the device
  }
}

RunnerOutput ModelRunner::collect() {
  if (in_flight_.empty()) fail("runner: collect with no step in flight");
  InFlight step = std::move(in_flight_.front());
  in_flight_.pop_front();
  if (!step.on_device) return std::move(step.output);
  const auto t = Clock::now();
  std::vector<int32_t> ids(step.rows.size());
  backend_.collect_sampled(ids.data());
  RunnerOutput& result = step.output;
  for (size_t i = 0; i < step.rows.size(); ++i) {
    const InFlight::Row& row = step.rows[i];
    const RequestId& id = row.id;
    if (std::find(step.dropped.begin(), step.dropped.end(), id) != step.dropped.end()) continue;
    const auto it = states_.find(id);
    const bool same_state = it != states_.end() && it->second.generation == row.generation;
    if (ids[i] < 0) {  // the host sampler must see these logits, which are gone: recompute
      result.recompute.push_back(id);
      if (same_state) states_.erase(it);
      if (!in_flight_.empty()) in_flight_.front().dropped.push_back(id);
      continue;
    }
    // A finished or preempted request's state is gone; a preempted one still takes the token.
    if (same_state) it->second.token_ids[row.token_index] = ids[i];
    result.sampled[id].push_back(ids[i]);
  }
  times_.sample_s += seconds_since(t);
  return std::move(step.output);
}

void ModelRunner::sample_now(const Tensor& logits, size_t num_logit_rows, const std::vector<State*>& samplers,
                             const std::vector<const RequestId*>& sampler_ids, const std::vector<PromptRows>& prompt_rows,
                             RunnerOutput& result) {
  // Rows the device samples come back as ids; the rest (and prompt rows) are downloaded.
  std::vector<int32_t> tokens(samplers.size(), -1);
  std::vector<std::optional<TokenLogprobs>> device_logprobs(samplers.size());
  std::vector<uint8_t> processed(samplers.size(), 0);  // a handed-back row the device already edited
  if (backend_.can_sample()) sample_on_device(logits, samplers, tokens, device_logprobs, processed);
  const size_t vocab = static_cast<size_t>(model_.spec().vocab_size);
  logits_host_.resize(num_logit_rows * vocab);
  const auto on_host = [&](size_t r) { return r >= samplers.size() || tokens[r] < 0; };
  for (size_t r = 0; r < num_logit_rows;) {  // one download per run of host rows
    if (!on_host(r)) {
      ++r;
      continue;
    }
    size_t end = r + 1;
    while (end < num_logit_rows && on_host(end)) ++end;
    backend_.download(logits.rows(static_cast<int64_t>(r), static_cast<int64_t>(end)),
                      logits_host_.data() + r * vocab);
    r = end;
  }
  size_t prompt_row = samplers.size();
  for (const PromptRows& p : prompt_rows) {
    const size_t num = static_cast<size_t>(p.positions.size());
    const std::span<const float> block(logits_host_.data() + prompt_row * vocab, num * vocab);
    const std::span<const int32_t> prompt(p.state->token_ids.data(), static_cast<size_t>(p.state->num_prompt_tokens));
    result.prompt_logprobs[*p.id] = score_prompt_tokens(block, vocab, prompt, p.positions.begin + 1,
                                                        *p.state->params.prompt_logprobs, prompt_scratch_, prompt_order_);
    prompt_row += num;
  }
  for (size_t i = 0; i < samplers.size(); ++i) {
    State& st = *samplers[i];
    int32_t token = tokens[i];
    if (token < 0) {
      const std::span<const int32_t> all(st.token_ids);
      const SamplerRow row{std::span<float>(logits_host_.data() + i * vocab, vocab), &st.params,
                           all.first(static_cast<size_t>(st.num_prompt_tokens)),
                           all.subspan(static_cast<size_t>(st.num_prompt_tokens)), &st.rng, processed[i] != 0};
      SampleResult r = sampler_.sample(row);
      token = r.token;
      if (r.logprobs) result.logprobs[*sampler_ids[i]].push_back(std::move(*r.logprobs));
    } else if (device_logprobs[i]) {
      result.logprobs[*sampler_ids[i]].push_back(std::move(*device_logprobs[i]));
    }
    st.token_ids.push_back(token);
    result.sampled[*sampler_ids[i]].push_back(token);
  }
}

void ModelRunner::sample_on_device(const Tensor& logits, const std::vector<State*>& samplers,
                                   std::vector<int32_t>& tokens, std::vector<std::optional<TokenLogprobs>>& logprobs,
                                   std::vector<uint8_t>& processed) {
  std::vector<SampleRowSpec> specs;
  std::vector<size_t> rows;  // sampler index of each spec
  std::vector<Rng> rng_before;
  edits_.clear();
  for (size_t i = 0; i < samplers.size(); ++i) {
    State& st = *samplers[i];
    if (!device_can_sample(st.params)) continue;
    rows.push_back(i);
    rng_before.push_back(st.rng);
    specs.push_back(row_spec(i, st));
  }
  if (specs.empty()) return;
  std::vector<int32_t> ids(specs.size());
  std::vector<DeviceLogprobs> row_logprobs(specs.size());
  backend_.sample(logits, specs, edits_, ids.data(), row_logprobs.data());
  for (size_t j = 0; j < specs.size(); ++j) {
    if (ids[j] >= 0) {
      tokens[rows[j]] = ids[j];
      if (specs[j].num_logprobs >= 0) logprobs[rows[j]] = token_logprobs(row_logprobs[j], ids[j]);
    } else {
      samplers[rows[j]]->rng = rng_before[j];  // the host sampler draws for it instead
      // The device edited its logits, unless it wants logprobs: then they come back raw.
      processed[rows[j]] = specs[j].edits_end > specs[j].edits_begin && specs[j].num_logprobs < 0;
    }
  }
}

}  // namespace pagoda
