// The logprobs of one row sampled on a device (Backend::sample): plain data, shared with the
// CUDA kernels' C++17 header. They describe the raw logits (vLLM's default logprobs_mode,
// raw_logprobs: before any logits processor), with sample/logprobs.cpp's arithmetic.
#pragma once

#include <cstdint>

namespace pagoda {

// A row that asks for more top tokens (or the whole vocabulary) is sampled on the host.
constexpr int kMaxDeviceLogprobs = 20;

struct DeviceLogprobs {
  float sampled_logprob = 0.0f;
  int32_t sampled_rank = 0;  // gather_logprobs' rank
  int32_t num_top = 0;       // top_ids/top_logprobs[0, num_top): by descending logprob, ties by id
  int32_t top_ids[kMaxDeviceLogprobs] = {};
  float top_logprobs[kMaxDeviceLogprobs] = {};
};

}  // namespace pagoda
