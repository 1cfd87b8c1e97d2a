// Times CUDA kernels in isolation on the device machine, one JSON object a line:
//  - the decode GEMV (gemv.cu) in every configuration gemv_with knows, on the Llama-3.1-8B
//    weights' shapes, n = 1 and 4 rows, as achieved GB/s of weight bytes; the
//    configuration gemv_config picks is marked "chosen";
//  - a batch-1 step's 128 layer GEMVs, fused as the step runs them, in one CUDA graph
//    (gemv_chain), in gemv_config's configurations and with each of its settings turned
//    back; with the argument `gemv`, only these two;
//  - a batch-1 step's attention part over a 1,024-token context in one CUDA graph, per layer:
//    attend_from_qkv (the fused decode attention), the rope and KV write and the split
//    attention (and its combine) as two ops, and each alone (decode_attention_chain), at 32
//    layers and at 1 so that the difference is per layer; with the argument `attention`, only
//    this, for the fused kernel and the attention alone at 64, 32, 16 and 8 splits at most,
//    at least 32, 64 or 128 keys a split, the combine as its own kernel or folded into the
//    last split (kSplitSettings);
//  - paged attention for one 1,024-token prefill in the Llama-3.1-8B head layout (32 query
//    heads, 8 KV heads, head_dim 128, BF16 cache, 16-token blocks): the tensor-core kernel
//    (the default backend) against the CUDA-core one (a PAGODA_BATCH_INVARIANT backend).
// Built with the CUDA backend as build/bin/cuda_kernel_bench; run by tools/device/run.sh
// kernels. Each timing is the median of 20 runs after 3 warm-ups, rotating over enough
// copies of each weight that none is served from the 60 MB L2.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernels.h"

namespace {

using pagoda::cuda::check;

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The grid and prefetch settings a GemvConfig can take besides its unroll and split.
struct GemvGrid {
  bool prefetch_rows;
  int blocks_per_sm;
};
constexpr GemvGrid kGemvGrids[] = {{false, 0}, {true, 4}, {true, 8}, {true, 16}};

void bench_gemv() {
  struct Shape {
    const char* name;
    int64_t m, k;
  };
  const Shape shapes[] = {{"qkv", 6144, 4096}, {"o", 4096, 4096}, {"gate_up", 28672, 4096},
                          {"down", 4096, 14336}, {"lm_head", 128256, 4096}};
  const std::pair<int, int> tilings[] = {{4, 1}, {4, 2}, {4, 4}, {4, 8}, {8, 1}, {8, 2}, {8, 4}};
  cudaStream_t stream = nullptr;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  std::mt19937 rng(1);
  for (const Shape& s : shapes) {
    const size_t bytes = size_t(s.m * s.k) * 2;
    const int copies = static_cast<int>(std::max<size_t>(2, (256u << 20) / bytes + 1));
    std::vector<__nv_bfloat16*> weights(static_cast<size_t>(copies));
    std::vector<__nv_bfloat16> host(size_t(s.m * s.k));
    std::normal_distribution<float> dist(0.0f, 0.02f);
    for (auto& v : host) v = __float2bfloat16(dist(rng));
    for (auto& w : weights) {
      check(cudaMalloc(&w, bytes), "cudaMalloc");
      check(cudaMemcpy(w, host.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    }
    __nv_bfloat16* x = nullptr;
    float* out = nullptr;
    check(cudaMalloc(&x, size_t(4 * s.k) * 2), "cudaMalloc");
    check(cudaMemcpy(x, host.data(), size_t(4 * s.k) * 2, cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMalloc(&out, size_t(4 * s.m) * 4), "cudaMalloc");
    for (const int64_t n : {1, 4}) {
      const pagoda::cuda::GemvConfig chosen = pagoda::cuda::gemv_config(n, s.m, s.k, true);
      std::vector<float> reference;
      for (const auto& [unroll, split] : tilings) {
        for (const GemvGrid& grid : kGemvGrids) {
          const pagoda::cuda::GemvConfig config{unroll, split, grid.prefetch_rows, grid.blocks_per_sm};
          std::vector<float> times;
          for (int it = 0; it < 23; ++it) {
            check(cudaEventRecord(start, stream), "cudaEventRecord");
            pagoda::cuda::gemv_with(config, x, n, s.k, weights[size_t(it % copies)], s.m, out, stream);
            check(cudaEventRecord(stop, stream), "cudaEventRecord");
            check(cudaEventSynchronize(stop), "cudaEventSynchronize");
            float ms = 0;
            check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
            if (it >= 3) times.push_back(ms);
          }
          std::vector<float> result(size_t(n * s.m));
          check(cudaMemcpy(result.data(), out, result.size() * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
          double max_diff = 0;
          if (reference.empty()) reference = result;
          for (size_t i = 0; i < result.size(); ++i) {
            max_diff = std::max(max_diff, double(std::abs(result[i] - reference[i])));
          }
          const float us = median(times) * 1000.0f;
          const bool is_chosen = unroll == chosen.unroll && split == chosen.split &&
                                 grid.blocks_per_sm == chosen.blocks_per_sm;
          std::printf(
              "{\"kernel\": \"gemv\", \"weight\": \"%s\", \"m\": %lld, \"k\": %lld, \"n\": %lld, \"unroll\": %d, "
              "\"split\": %d, \"prefetch_rows\": %d, \"blocks_per_sm\": %d, \"us\": %.2f, \"gb_per_s\": %.0f, "
              "\"max_diff_vs_first\": %.2e, \"chosen\": %s}\n",
              s.name, static_cast<long long>(s.m), static_cast<long long>(s.k), static_cast<long long>(n), unroll,
              split, grid.prefetch_rows ? 1 : 0, grid.blocks_per_sm, us, double(bytes) / (us * 1e3), max_diff,
              is_chosen ? "true" : "false");
        }
      }
    }
    for (auto* w : weights) cudaFree(w);
    cudaFree(x);
    cudaFree(out);
  }
  cudaStreamDestroy(stream);
}

// A batch-1 decode step's GEMVs as the step runs them: 32 layers of the qkv projection (the
// RMSNorm fused in), o (added to the residual), gate/up (the norm and SiLU fused in) and down
// (added to the residual), over distinct weights (14 GB, none served from L2), captured in
// one CUDA graph and replayed. Against the weights' bytes this is what the step's matmuls
// cost, launch gaps, ramps and tails included (isolated launches, above, add the launch and
// event overhead a graph does not pay). Each GEMV runs gemv_config's choice with `setting`
// laid over it.
struct ChainSetting {
  const char* name;
  int max_split;           // split at most this (4: the down projection as before its split of 8)
  bool prefetch_rows;
  int norm_blocks_per_sm;  // the fused norm's grid (0: as many blocks as fit)
};

void bench_gemv_chain(const ChainSetting& setting) {
  using pagoda::cuda::GemvFusion;
  using pagoda::cuda::GemvGate;
  constexpr int64_t kHidden = 4096, kInter = 14336;
  struct Gemv {
    int64_t m, k;
    bool norm;
    GemvGate gate;
  };
  const Gemv gemvs[] = {{6144, kHidden, true, GemvGate::None},
                        {kHidden, kHidden, false, GemvGate::None},
                        {2 * kInter, kHidden, true, GemvGate::Silu},
                        {kHidden, kInter, false, GemvGate::None}};
  constexpr int kLayers = 32;
  std::vector<__nv_bfloat16*> weights;
  size_t bytes = 0;
  for (int l = 0; l < kLayers; ++l) {
    for (const Gemv& g : gemvs) {
      __nv_bfloat16* w = nullptr;
      check(cudaMalloc(&w, size_t(g.m * g.k) * 2), "cudaMalloc");
      check(cudaMemset(w, 0x22, size_t(g.m * g.k) * 2), "cudaMemset");  // BF16 0x2222: ~2e-18, no overflow
      weights.push_back(w);
      bytes += size_t(g.m * g.k) * 2;
    }
  }
  float *hidden = nullptr, *norm = nullptr, *qkv = nullptr, *act = nullptr;
  __nv_bfloat16 *attn = nullptr, *act_bf16 = nullptr;
  check(cudaMalloc(&hidden, kHidden * 4), "cudaMalloc");
  check(cudaMalloc(&norm, kHidden * 4), "cudaMalloc");
  check(cudaMalloc(&qkv, 6144 * 4), "cudaMalloc");
  check(cudaMalloc(&act, kInter * 4), "cudaMalloc");
  check(cudaMalloc(&attn, kHidden * 2), "cudaMalloc");
  check(cudaMalloc(&act_bf16, kInter * 2), "cudaMalloc");
  check(cudaMemset(hidden, 0x3f, kHidden * 4), "cudaMemset");  // F32 0x3f3f3f3f: ~0.75
  check(cudaMemset(norm, 0x3f, kHidden * 4), "cudaMemset");
  check(cudaMemset(attn, 0x3c, kHidden * 2), "cudaMemset");
  check(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  const auto run = [&] {
    for (size_t i = 0; i < weights.size(); ++i) {
      const Gemv& g = gemvs[i % 4];
      GemvFusion f;
      if (g.norm) {
        f.x_f32 = hidden;
        f.norm_weight = norm;
        f.eps = 1e-5f;
      } else {
        f.x = g.k == kHidden ? attn : act_bf16;
        f.accumulate = true;
      }
      f.gate = g.gate;
      if (g.gate != GemvGate::None) f.out_bf16 = act_bf16;
      float* out = g.gate != GemvGate::None ? act : (g.norm ? qkv : hidden);
      const bool plain = !g.norm && g.gate == GemvGate::None;
      pagoda::cuda::GemvConfig config = pagoda::cuda::gemv_config(1, g.m, g.k, plain);
      config.split = std::min(config.split, setting.max_split);
      config.prefetch_rows = setting.prefetch_rows;
      if (!plain) config.blocks_per_sm = setting.norm_blocks_per_sm;
      pagoda::cuda::gemv_fused_with(config, 1, g.k, weights[i], g.m, out, f, stream);
    }
  };
  run();  // warm-up, outside the capture
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  run();
  check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  std::vector<float> times;
  for (int it = 0; it < 13; ++it) {
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
    check(cudaEventRecord(stop, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    if (it >= 3) times.push_back(ms);
  }
  const float ms = median(times);
  std::printf(
      "{\"kernel\": \"gemv_chain\", \"tiling\": \"%s\", \"layers\": %d, \"gemvs\": %zu, \"ms\": %.3f, \"tb_per_s\": "
      "%.2f}\n",
      setting.name, kLayers, weights.size(), ms, double(bytes) / (ms * 1e9));
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  for (auto* w : weights) cudaFree(w);
  for (void* p : {static_cast<void*>(hidden), static_cast<void*>(norm), static_cast<void*>(qkv),
                  static_cast<void*>(act), static_cast<void*>(attn), static_cast<void*>(act_bf16)}) {
    cudaFree(p);
  }
  cudaStreamDestroy(stream);
}

// The chain in gemv_config's settings (the defaults), and with each turned back to what the
// fifteenth session's build ran (4 warps a row for the down projection too, no row
// prefetch), or the fused norm's grid at 8 or 16 blocks a multiprocessor (more than fit).
// "chosen" runs again last: the spread between its two runs is the noise.
constexpr ChainSetting kChainSettings[] = {{"chosen", 8, true, 0},       {"as_before", 4, false, 0},
                                           {"no_prefetch", 8, false, 0}, {"down_split_4", 4, true, 0},
                                           {"norm_grid_8", 8, true, 8},  {"norm_grid_16", 8, true, 16},
                                           {"chosen", 8, true, 0}};

// How the backend splits a batch-1 decode's context: PAGODA_MAX_ATTENTION_SPLITS,
// PAGODA_MIN_SPLIT_KEYS and PAGODA_FOLD_COMBINE. The first setting is the backend's default.
struct SplitSetting {
  int max_splits, min_keys;
  bool fold_combine;
};
constexpr SplitSetting kSplitSettings[] = {{64, 32, false}, {64, 32, true},  {32, 32, false}, {16, 32, false},
                                           {8, 32, false},  {64, 64, false}, {64, 128, false}, {128, 64, false}};

// A batch-1 decode step's attention part as the step runs it, in one CUDA graph through the
// backend (its graphs, its split and combine): per layer attend_from_qkv from a stacked qkv
// row (one kernel), or split_rope_write_kv and paged_attention, over a 1,024-token context,
// in the Llama-3.1-8B layout (32/8 heads, head_dim 128, BF16 cache, 16-token blocks), every
// layer its own cache. Timed on the host around replay + a one-row download, for 32 layers
// and for 1: the difference / 31 is one layer's cost inside a graph, without the fixed
// overheads. For the default setting the stages are also timed alone (rope only; attention
// only), to place the time.
void bench_decode_attention_chain(const SplitSetting& setting) {
  const int max_splits = setting.max_splits, min_keys = setting.min_keys;
  const bool fold_combine = setting.fold_combine;
  using namespace pagoda;
  const int64_t heads = 32, kv_heads = 8, head_dim = 128, block_size = 16, context = 1025;
  const int64_t table_blocks = (context + block_size - 1) / block_size, num_blocks = table_blocks + 1;
  constexpr int kLayers = 32;
  setenv("PAGODA_MAX_ATTENTION_SPLITS", std::to_string(max_splits).c_str(), 1);
  setenv("PAGODA_MIN_SPLIT_KEYS", std::to_string(min_keys).c_str(), 1);
  if (fold_combine) setenv("PAGODA_FOLD_COMBINE", "1", 1);
  std::unique_ptr<Backend> b = make_backend("cuda");
  unsetenv("PAGODA_MAX_ATTENTION_SPLITS");
  unsetenv("PAGODA_MIN_SPLIT_KEYS");
  unsetenv("PAGODA_FOLD_COMBINE");
  const bool defaults = &setting == &kSplitSettings[0];
  // The context: 1,024 old tokens written once, then one new token a step.
  std::vector<int32_t> table(static_cast<size_t>(table_blocks));
  std::iota(table.begin(), table.end(), 1);
  const auto slot_of = [&](int64_t p) { return int64_t{table[size_t(p / block_size)]} * block_size + p % block_size; };
  std::vector<int32_t> old_qsl = {0, static_cast<int32_t>(context - 1)}, old_lens = {static_cast<int32_t>(context - 1)};
  std::vector<int64_t> old_slots(static_cast<size_t>(context - 1));
  for (int64_t p = 0; p + 1 < context; ++p) old_slots[size_t(p)] = slot_of(p);
  const AttentionMetadata fill{static_cast<int>(context - 1), 1, old_qsl.data(), old_lens.data(), table.data(),
                               static_cast<int>(table_blocks), old_slots.data()};
  std::vector<int32_t> qsl = {0, 1}, lens = {static_cast<int32_t>(context)}, positions = {static_cast<int32_t>(context - 1)};
  std::vector<int64_t> slot = {slot_of(context - 1)};
  const AttentionMetadata meta{1, 1, qsl.data(), lens.data(), table.data(), static_cast<int>(table_blocks), slot.data()};

  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> old_kv(size_t((context - 1) * kv_heads * head_dim)), qkv_host(size_t((heads + 2 * kv_heads) * head_dim));
  for (float& v : old_kv) v = dist(rng);
  for (float& v : qkv_host) v = dist(rng);
  Tensor old_k = b->alloc(DType::F32, {context - 1, kv_heads, head_dim});
  b->copy_from_host(old_kv.data(), old_k);
  std::vector<Tensor> k_caches, v_caches;
  for (int l = 0; l < kLayers; ++l) {
    k_caches.push_back(b->alloc(b->kv_cache_dtype(), {num_blocks, block_size, kv_heads, head_dim}));
    v_caches.push_back(b->alloc(b->kv_cache_dtype(), {num_blocks, block_size, kv_heads, head_dim}));
    b->write_kv(old_k, old_k, k_caches.back(), v_caches.back(), fill);
  }
  Tensor qkv = b->alloc(DType::F32, {1, (heads + 2 * kv_heads) * head_dim});
  b->copy_from_host(qkv_host.data(), qkv);
  Tensor q = b->alloc(DType::F32, {1, heads, head_dim}), out = b->alloc(DType::F32, {1, heads, head_dim});
  b->copy_from_host(qkv_host.data(), q);  // any values: "attention only" reads q without a rope before it
  std::vector<float> inv_freq(size_t(head_dim / 2));
  for (size_t i = 0; i < inv_freq.size(); ++i) inv_freq[i] = std::pow(500000.0f, -2.0f * float(i) / float(head_dim));
  const RopeConfig rope{inv_freq.data(), static_cast<int>(head_dim), true, 1.0f};
  const float scale = 1.0f / std::sqrt(float(head_dim));
  const Tensor first = out.rows(0, 1);
  std::vector<float> row(size_t(heads * head_dim));

  const auto time_graph = [&](int layers, bool with_rope, bool with_attention, bool fused) {
    const auto step = [&] {
      for (int l = 0; l < layers; ++l) {
        Tensor& kc = k_caches[size_t(l)];
        Tensor& vc = v_caches[size_t(l)];
        if (fused) {
          b->attend_from_qkv(qkv, HeadNorms{}, positions.data(), rope, q, kc, vc, meta, scale, 0, 0.0f, out);
          continue;
        }
        if (with_rope) b->split_rope_write_kv(qkv, HeadNorms{}, positions.data(), rope, q, kc, vc, meta);
        if (with_attention) b->paged_attention(q, kc, vc, meta, scale, 0, 0.0f, out);
      }
    };
    step();  // warm-up and first-use allocations, outside the capture
    b->begin_capture({});
    step();
    const int graph = b->end_capture();
    std::vector<float> times;
    for (int it = 0; it < 53; ++it) {
      const auto t0 = std::chrono::steady_clock::now();
      b->replay(graph);
      b->download(first, row.data());
      const auto elapsed = std::chrono::steady_clock::now() - t0;
      if (it >= 3) times.push_back(std::chrono::duration<float, std::micro>(elapsed).count());
    }
    b->release_graph(graph);
    return median(times);
  };
  const struct {
    const char* stages;
    bool rope, attention, fused;
  } variants[] = {{"attend_from_qkv", true, true, true},
                  {"rope+attention", true, true, false},
                  {"rope", true, false, false},
                  {"attention", false, true, false}};
  for (const auto& v : variants) {
    const bool splits_matter = v.fused || (v.attention && !v.rope);
    if (!defaults && !splits_matter) continue;
    const float all = time_graph(kLayers, v.rope, v.attention, v.fused);
    const float one = time_graph(1, v.rope, v.attention, v.fused);
    std::printf("{\"kernel\": \"decode_attention_chain\", \"stages\": \"%s\", \"max_splits\": %d, \"min_split_keys\": %d, "
                "\"fold_combine\": %d, \"context\": %lld, \"us_32_layers\": %.1f, \"us_1_layer\": %.1f, "
                "\"us_per_layer\": %.2f, \"probe\": %.4f}\n",
                v.stages, max_splits, min_keys, fold_combine ? 1 : 0, static_cast<long long>(context), all, one,
                (all - one) / (kLayers - 1), row[0]);
  }
}

// Host-timed (with a synchronizing download after each run), so a few microseconds of
// overhead are included in both.
void bench_prefill_attention() {
  using namespace pagoda;
  const int64_t heads = 32, kv_heads = 8, head_dim = 128, block_size = 16, tokens = 1024;
  const int64_t num_blocks = tokens / block_size + 1;
  std::vector<int32_t> qsl = {0, static_cast<int32_t>(tokens)}, lens = {static_cast<int32_t>(tokens)};
  std::vector<int32_t> table(size_t(num_blocks - 1));
  std::iota(table.begin(), table.end(), 1);
  std::vector<int64_t> slots(static_cast<size_t>(tokens));
  for (int64_t p = 0; p < tokens; ++p) slots[size_t(p)] = table[size_t(p / block_size)] * block_size + p % block_size;
  const AttentionMetadata meta{static_cast<int>(tokens), 1, qsl.data(), lens.data(), table.data(),
                               static_cast<int>(num_blocks - 1), slots.data()};
  std::mt19937 rng(2);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> q(size_t(tokens * heads * head_dim)), kv(size_t(tokens * kv_heads * head_dim));
  for (float& v : q) v = dist(rng);
  for (float& v : kv) v = dist(rng);
  for (const bool tensor_cores : {true, false}) {
    if (!tensor_cores) setenv("PAGODA_BATCH_INVARIANT", "1", 1);
    std::unique_ptr<Backend> b = make_backend("cuda");
    unsetenv("PAGODA_BATCH_INVARIANT");
    Tensor qt = b->alloc(DType::F32, {tokens, heads, head_dim}), out = b->alloc(DType::F32, {tokens, heads, head_dim});
    Tensor k = b->alloc(DType::F32, {tokens, kv_heads, head_dim});
    Tensor v = b->alloc(DType::F32, {tokens, kv_heads, head_dim});
    b->copy_from_host(q.data(), qt);
    b->copy_from_host(kv.data(), k);
    b->copy_from_host(kv.data(), v);
    Tensor kc = b->alloc(DType::BF16, {num_blocks, block_size, kv_heads, head_dim});
    Tensor vc = b->alloc(DType::BF16, {num_blocks, block_size, kv_heads, head_dim});
    b->write_kv(k, v, kc, vc, meta);
    float probe = 0;
    const Tensor first = out.rows(0, 1);
    std::vector<float> times;
    for (int it = 0; it < 23; ++it) {
      const auto t0 = std::chrono::steady_clock::now();
      b->paged_attention(qt, kc, vc, meta, 1.0f / std::sqrt(128.0f), 0, 0.0f, out);
      std::vector<float> row(size_t(heads * head_dim));
      b->download(first, row.data());
      probe += row[0];
      const auto elapsed = std::chrono::steady_clock::now() - t0;
      if (it >= 3) times.push_back(std::chrono::duration<float, std::milli>(elapsed).count());
    }
    std::printf("{\"kernel\": \"paged_attention\", \"tokens\": %lld, \"heads\": \"32/8\", \"head_dim\": 128, "
                "\"path\": \"%s\", \"ms\": %.3f, \"probe\": %.4f}\n",
                static_cast<long long>(tokens), tensor_cores ? "tensor_cores" : "cuda_cores", median(times), probe);
  }
}

}  // namespace

// cuda_kernel_bench [attention|gemv]: everything, only the decode attention chain's sweep over
// split counts and the folded combine, or only the GEMVs and their chain (a short device call).
int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  const bool attention_only = only == "attention";
  try {
    if (!attention_only) {
      bench_gemv();
      for (const ChainSetting& setting : kChainSettings) bench_gemv_chain(setting);
      if (only == "gemv") return 0;
    }
    for (const SplitSetting& setting : kSplitSettings) {
      if (attention_only || &setting == &kSplitSettings[0]) bench_decode_attention_chain(setting);
    }
    if (!attention_only) bench_prefill_attention();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuda_kernel_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
