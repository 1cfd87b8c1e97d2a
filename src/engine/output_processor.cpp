#include "engine/output_processor.h"

#include <algorithm>

#include "core/error.h"

namespace pagoda {

namespace {

FinishReason reason_of(RequestStatus s) {
  switch (s) {
    case RequestStatus::FinishedStopped: return FinishReason::Stop;
    case RequestStatus::FinishedLengthCapped: return FinishReason::Length;
    default: return FinishReason::Abort;
  }
}

}  // namespace

void OutputProcessor::add_request(const RequestId& id, const SamplingParams& params, Clock::time_point arrival) {
  if (states_.count(id)) fail("request ", id, ": id already in use");
  const DetokenizeOptions options{params.skip_special_tokens, params.spaces_between_special_tokens};
  states_.emplace(id, State{params, IncrementalDetokenizer(tokenizer_, options), {}, 0, 0, nullptr, arrival,
                            std::nullopt, false, {}});
}

void OutputProcessor::mark_scheduled(const RequestId& id, Clock::time_point now) {
  const auto it = states_.find(id);
  if (it == states_.end() || it->second.queue_time_s) return;
  it->second.queue_time_s = std::max(0.0, std::chrono::duration<double>(now - it->second.arrival).count());
}

void OutputProcessor::add_prompt_logprobs(const RequestId& id, const PromptLogprobsChunk& chunk) {
  const auto it = states_.find(id);
  if (it == states_.end() || it->second.first_delta_sent) return;
  std::vector<TokenLogprobs>& have = it->second.prompt_logprobs;
  // have[k] scores prompt token k + 1; chunks arrive in position order.
  const auto next = static_cast<int64_t>(have.size()) + 1;
  if (chunk.first_token > next) fail("output processor: request ", id, " skipped prompt logprobs before token ", chunk.first_token);
  for (size_t k = static_cast<size_t>(next - chunk.first_token); k < chunk.values.size(); ++k) {
    have.push_back(chunk.values[k]);
  }
}

bool OutputProcessor::feed(State& st, std::string_view delta, RequestOutput& out) {
  // vLLM checks stop strings only after min_tokens outputs; before, text goes out as is.
  if (!st.checker && !st.params.stop.empty() && st.detokenizer.num_ids() > st.params.min_tokens) {
    st.checker = std::make_unique<StopChecker>(st.params.stop, st.params.include_stop_str_in_output);
    st.checker_base = st.fed.size();
  }
  st.fed += delta;
  size_t emit_end = st.fed.size();
  bool stopped = false;
  if (st.checker) {
    const StopChecker::Update u = st.checker->append(delta);
    emit_end = st.checker_base + u.emit_end;
    if (u.stopped) {
      stopped = true;
      out.stop_reason = st.params.stop[static_cast<size_t>(u.stop_index)];
    }
  }
  if (emit_end > st.emitted) {
    out.text.append(st.fed, st.emitted, emit_end - st.emitted);
    st.emitted = emit_end;
  }
  return stopped;
}

RequestOutput OutputProcessor::process(const RequestId& id, std::span<const int32_t> tokens,
                                       std::span<const TokenLogprobs> logprobs,
                                       std::optional<RequestStatus> finished_status) {
  const auto it = states_.find(id);
  if (it == states_.end()) fail("output processor: unknown request ", id);
  State& st = it->second;
  RequestOutput out;
  out.id = id;
  out.token_ids.assign(tokens.begin(), tokens.end());
  out.logprobs.assign(logprobs.begin(), logprobs.end());
  std::string delta = st.detokenizer.add(tokens);
  const bool final = finished_status.has_value();
  if (final) delta += st.detokenizer.flush();  // an incomplete character ends as U+FFFD
  const bool stopped = feed(st, delta, out);
  if (stopped) {
    out.finished = true;
    out.finish_reason = FinishReason::Stop;
  } else if (final) {
    if (st.checker) {  // held back as a possible stop prefix: the generation ended anyway
      const size_t end = st.checker_base + st.checker->finish_emit_end();
      if (end > st.emitted) out.text.append(st.fed, st.emitted, end - st.emitted);
    }
    out.finished = true;
    out.finish_reason = reason_of(*finished_status);
  }
  if (!st.first_delta_sent && (!out.token_ids.empty() || out.finished)) {
    st.first_delta_sent = true;
    out.queue_time_s = st.queue_time_s;
    out.prompt_logprobs = std::move(st.prompt_logprobs);
  }
  if (out.finished) states_.erase(it);
  return out;
}

RequestOutput OutputProcessor::abort(const RequestId& id) {
  RequestOutput out;
  out.id = id;
  out.finished = true;
  out.finish_reason = FinishReason::Abort;
  const auto it = states_.find(id);
  if (it != states_.end() && !it->second.first_delta_sent) out.queue_time_s = it->second.queue_time_s;
  states_.erase(id);
  return out;
}

}  // namespace pagoda
