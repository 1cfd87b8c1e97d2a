// A CPU backend that samples on its "device" and ahead (Backend::sample_async), so that the
// runner's async path, which otherwise runs only on a GPU, runs in CI: placeholders read by
// embedding(), ids collected a step later, rows handed back and recomputed.
//
// Every op is the CPU backend's. The device sampler it adds draws greedy rows only (argmax
// after the row's edits, lowest id on ties, as the host sampler) and hands every other row
// back, so a seeded sampled request takes the host sampler's path (sample) or the recompute
// path (sample_async) and its tokens stay the host sampler's.
#pragma once

#include <cmath>
#include <deque>
#include <memory>
#include <vector>

#include "backend/backend.h"
#include "core/error.h"
#include "sample/logit_edits.h"

namespace pagoda::testing {

class AheadTestBackend final : public Backend {
 public:
  explicit AheadTestBackend(std::unique_ptr<Backend> cpu) : cpu_(std::move(cpu)) {}

  int64_t num_sampled_ahead = 0;  // rows given to sample_async
  int64_t num_placeholders = 0;   // placeholder ids embedding() resolved
  int64_t num_handed_back = 0;    // rows sample_async handed back

  [[nodiscard]] std::string name() const override { return "ahead-" + cpu_->name(); }
  [[nodiscard]] bool can_sample() const override { return true; }
  void sample(const Tensor& logits, std::span<const SampleRowSpec> rows, std::span<const LogitEdit> edits, int32_t* ids,
              DeviceLogprobs* /*logprobs*/) override {
    for (size_t i = 0; i < rows.size(); ++i) ids[i] = draw(logits, rows[i], edits);
  }
  [[nodiscard]] bool can_sample_async() const override { return true; }
  void sample_async(const Tensor& logits, std::span<const SampleRowSpec> rows, std::span<const LogitEdit> edits) override {
    if (pending_.size() >= 2) fail("sample_async: two samplings already wait to be collected");
    std::vector<int32_t> ids(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      if (rows[i].num_logprobs >= 0) fail("sample_async: a row asks for logprobs");
      ids[i] = draw(logits, rows[i], edits);
      num_handed_back += ids[i] < 0;
    }
    num_sampled_ahead += static_cast<int64_t>(rows.size());
    last_ = ids;
    pending_.push_back(std::move(ids));
  }
  void collect_sampled(int32_t* ids) override {
    if (pending_.empty()) fail("collect_sampled: nothing was sampled ahead");
    std::copy(pending_.front().begin(), pending_.front().end(), ids);
    pending_.pop_front();
  }
  void embedding(const Tensor& table, const int32_t* ids, int n, Tensor& out) override {
    std::vector<int32_t> resolved(ids, ids + n);
    for (int32_t& id : resolved) {
      if (id >= 0) continue;
      const auto row = static_cast<size_t>(-id - 1);
      if (row >= last_.size()) fail("embedding: placeholder ", id, " beyond the ", last_.size(), " rows sampled ahead");
      id = last_[row] < 0 ? 0 : last_[row];
      ++num_placeholders;
    }
    cpu_->embedding(table, resolved.data(), n, out);
  }

  // The rest is the CPU backend's.
  [[nodiscard]] Tensor alloc(DType dtype, Shape shape) override { return cpu_->alloc(dtype, std::move(shape)); }
  [[nodiscard]] Tensor scratch(DType dtype, Shape shape) override { return cpu_->scratch(dtype, std::move(shape)); }
  [[nodiscard]] Tensor upload(const Tensor& host) override { return cpu_->upload(host); }
  [[nodiscard]] bool upload_copies() const override { return cpu_->upload_copies(); }
  [[nodiscard]] bool stacks_projections() const override { return cpu_->stacks_projections(); }
  [[nodiscard]] std::optional<Tensor> upload_stacked(std::span<const Tensor* const> parts) override {
    return cpu_->upload_stacked(parts);
  }
  void download(const Tensor& src, float* dst) override { cpu_->download(src, dst); }
  void copy_from_host(const float* src, Tensor& dst) override { cpu_->copy_from_host(src, dst); }
  void rms_norm(const Tensor& x, const Tensor& weight, float eps, Tensor& out) override {
    cpu_->rms_norm(x, weight, eps, out);
  }
  void matmul(const Tensor& x, const Tensor& w, Tensor& out) override { cpu_->matmul(x, w, out); }
  void fused_matmul(const Tensor& x, const MatmulFusion& fusion, const Tensor& w, Tensor& out) override {
    cpu_->fused_matmul(x, fusion, w, out);
  }
  void add_bias(Tensor& x, const Tensor& bias) override { cpu_->add_bias(x, bias); }
  void add(Tensor& x, const Tensor& y) override { cpu_->add(x, y); }
  void scale(Tensor& x, float s) override { cpu_->scale(x, s); }
  void softcap(Tensor& x, float cap) override { cpu_->softcap(x, cap); }
  void silu_mul(const Tensor& gate, const Tensor& up, Tensor& out) override { cpu_->silu_mul(gate, up, out); }
  void gelu_mul(const Tensor& gate, const Tensor& up, Tensor& out) override { cpu_->gelu_mul(gate, up, out); }
  void silu_mul_stacked(const Tensor& gate_up, Tensor& out) override { cpu_->silu_mul_stacked(gate_up, out); }
  void gelu_mul_stacked(const Tensor& gate_up, Tensor& out) override { cpu_->gelu_mul_stacked(gate_up, out); }
  void split_columns(const Tensor& x, std::span<Tensor* const> parts) override { cpu_->split_columns(x, parts); }
  void rope(Tensor& x, const int32_t* positions, const RopeConfig& config) override {
    cpu_->rope(x, positions, config);
  }
  [[nodiscard]] DType kv_cache_dtype() const override { return cpu_->kv_cache_dtype(); }
  void write_kv(const Tensor& k, const Tensor& v, Tensor& k_cache, Tensor& v_cache,
                const AttentionMetadata& meta) override {
    cpu_->write_kv(k, v, k_cache, v_cache, meta);
  }
  void paged_attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache, const AttentionMetadata& meta,
                       float scale, int sliding_window, float softcap, Tensor& out) override {
    cpu_->paged_attention(q, k_cache, v_cache, meta, scale, sliding_window, softcap, out);
  }
  void split_rope_write_kv(const Tensor& qkv, const HeadNorms& norms, const int32_t* positions,
                           const RopeConfig& rotary, Tensor& q_out, Tensor& k_cache, Tensor& v_cache,
                           const AttentionMetadata& meta) override {
    cpu_->split_rope_write_kv(qkv, norms, positions, rotary, q_out, k_cache, v_cache, meta);
  }
  void attend_from_qkv(const Tensor& qkv, const HeadNorms& norms, const int32_t* positions, const RopeConfig& rotary,
                       Tensor& q_scratch, Tensor& k_cache, Tensor& v_cache, const AttentionMetadata& meta, float scale,
                       int sliding_window, float softcap, Tensor& out) override {
    cpu_->attend_from_qkv(qkv, norms, positions, rotary, q_scratch, k_cache, v_cache, meta, scale, sliding_window,
                          softcap, out);
  }

 private:
  // A row's id (-1: handed back). Rows without logprobs get their edits in place first: a
  // handed-back row then carries its processors, as Backend::sample promises.
  static int32_t draw(const Tensor& logits, const SampleRowSpec& row, std::span<const LogitEdit> edits) {
    const int64_t vocab = logits.row_numel();
    std::span<float> x(const_cast<float*>(logits.data<float>()) + static_cast<int64_t>(row.logit_row) * vocab,
                       static_cast<size_t>(vocab));
    if (row.num_logprobs >= 0) return -1;
    apply_logit_edits(x, edits.subspan(static_cast<size_t>(row.edits_begin),
                                       static_cast<size_t>(row.edits_end - row.edits_begin)),
                      row.penalties);
    if (row.greedy == 0) return -1;
    int32_t best = 0;
    for (int64_t i = 0; i < vocab; ++i) {
      const float v = x[static_cast<size_t>(i)];
      if (std::isnan(v) || v == INFINITY) return -1;  // the host sampler's cases
      if (v > x[static_cast<size_t>(best)]) best = static_cast<int32_t>(i);
    }
    return x[static_cast<size_t>(best)] > -INFINITY ? best : -1;
  }

  std::unique_ptr<Backend> cpu_;
  std::deque<std::vector<int32_t>> pending_;
  std::vector<int32_t> last_;  // the last sample_async's ids: what placeholders name
};

}  // namespace pagoda::testing
