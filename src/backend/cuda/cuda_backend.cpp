// The Backend interface on one GPU: memory from the stream-ordered pool, ops as kernels and
// cuBLASLt calls on one stream (see cuda_backend.h).
#include "backend/cuda/cuda_backend.h"

#include <cuda_profiler_api.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "backend/cuda/capture_arena.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/device_mirror.h"
#include "backend/cuda/env_settings.h"
#include "backend/cuda/gemm.h"
#include "backend/cuda/kernels.h"
#include "backend/cuda/op_profile.h"
#include "backend/cuda/weight_upload.h"
#include "backend/op_checks.h"

namespace pagoda::cuda {

namespace {

// The stream every allocation is freed on. Tensors keep it alive through their deleters,
// so it outlives the backend when tensors do.
struct StreamOwner {
  cudaStream_t stream = nullptr;
  StreamOwner() { check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~StreamOwner() {
    cudaStreamSynchronize(stream);
    cudaStreamDestroy(stream);
  }
  StreamOwner(const StreamOwner&) = delete;
  StreamOwner& operator=(const StreamOwner&) = delete;
};

using namespace op_checks;

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device)
      : stream_owner_(init_device(device)),
        stream_(stream_owner_->stream),
        mirror_(stream_),
        uploader_(stream_),
        batch_invariant_(env_flag("PAGODA_BATCH_INVARIANT")),
        fuse_decode_ops_(!env_off("PAGODA_FUSED_GEMV")),
        fold_combine_(env_flag("PAGODA_FOLD_COMBINE")),
        attention_mma_(!env_off("PAGODA_ATTENTION_MMA")),
        max_attention_splits_(env_int("PAGODA_MAX_ATTENTION_SPLITS", attention_mma_ ? 32 : 64, 1, 1024)),
        min_split_keys_(env_int("PAGODA_MIN_SPLIT_KEYS", 32, 1, 1 << 20)),
        fused_decode_attention_(!env_off("PAGODA_FUSED_DECODE_ATTENTION")),
        gemm_(stream_, batch_invariant_),
        profile_(stream_, env_flag("PAGODA_PROFILE")) {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    name_ = std::string("cuda-") + prop.name;
    num_sms_ = prop.multiProcessorCount;
    // PAGODA_L2_PREFETCH: the share of L2 (percent) a prefetched weight may fill; 0, the
    // default, turns prefetching off. Measured on an H100 (tools/device/NOTES.md): at 60,
    // issued from four blocks, batch-1 decode was 32% slower (eighteenth run); spread over
    // every multiprocessor, 1.5% slower at 60 and 1% at 30, and slower still issued after
    // the qkv GEMV ends (twenty-first run). Hopper and later only (the bulk prefetch
    // instruction).
    const int percent = env_int("PAGODA_L2_PREFETCH", 0, 0, 100);
    l2_bytes_ = prop.l2CacheSize;
    if (prop.major >= 9) l2_prefetch_bytes_ = l2_bytes_ * percent / 100;
    split_counters_ = outside_pool(DType::I32, {kSplitCounters});
    check(cudaMemsetAsync(split_counters_.raw(), 0, split_counters_.nbytes(), stream_),
          "cudaMemsetAsync (split counters)");
  }

  ~CudaBackend() override {
    cudaStreamSynchronize(stream_);
    for (AheadSlot& a : ahead_) {
      if (a.pinned != nullptr) cudaFreeHost(a.pinned);
      if (a.done != nullptr) cudaEventDestroy(a.done);
    }
  }

  [[nodiscard]] std::string name() const override { return name_; }

  [[nodiscard]] Tensor alloc(DType dtype, Shape shape) override {
    Tensor t = scratch(dtype, std::move(shape));
    check(cudaMemsetAsync(t.raw(), 0, t.nbytes(), stream_), "cudaMemsetAsync");
    return t;
  }

  [[nodiscard]] Tensor scratch(DType dtype, Shape shape) override {
    const Tensor probe = Tensor::view(dtype, shape, nullptr);
    const size_t bytes = std::max<size_t>(probe.nbytes(), 1);
    void* p = nullptr;
    std::shared_ptr<void> storage;
    if (capturing_) {  // not the pool: its allocations would be recorded (capture_arena.h)
      p = arena_->allocate(bytes);
      storage = std::shared_ptr<void>(p, [arena = arena_, bytes, epoch = arena_->epoch()](void* q) {
        arena->release(q, bytes, epoch);
      });
    } else {
      check(cudaMallocAsync(&p, bytes, stream_), "cudaMallocAsync");
      std::shared_ptr<StreamOwner> owner = stream_owner_;
      storage = std::shared_ptr<void>(p, [owner](void* q) { cudaFreeAsync(q, owner->stream); });
    }
    // Memory handed out again after the BF16 copy's source was freed: that copy is stale. A
    // live source cannot be handed out, so allocating leaves its copy usable (the decoder
    // allocates q and qkv between the norm and the q/k/v matmul).
    const auto* begin = static_cast<const uint8_t*>(p);
    const auto* source = static_cast<const uint8_t*>(bf16_source_);
    if (source != nullptr && begin < source + bf16_source_numel_ * 4 && source < begin + bytes) forget_bf16_copy();
    return Tensor::shared(dtype, std::move(shape), std::move(storage), p);
  }

  [[nodiscard]] Tensor upload(const Tensor& host) override {
    forget_bf16_copy();
    if (host.dtype() == DType::I32) fail("upload: I32 tensors are not weights");
    Tensor dev = scratch(host.ndim() <= 1 ? DType::F32 : DType::BF16, host.shape());
    uploader_.copy(host, dev);
    return dev;
  }

  [[nodiscard]] bool stacks_projections() const override { return true; }
  [[nodiscard]] bool upload_copies() const override { return true; }

  // Each part is converted straight into its rows of the stacked weight.
  [[nodiscard]] std::optional<Tensor> upload_stacked(std::span<const Tensor* const> parts) override {
    forget_bf16_copy();
    const Shape shape = stacked_shape(parts);
    for (const Tensor* p : parts) {
      if (p->dtype() == DType::I32) fail("upload: I32 tensors are not weights");
    }
    Tensor dev = scratch(shape.size() == 1 ? DType::F32 : DType::BF16, shape);
    int64_t row = 0;
    for (const Tensor* p : parts) {
      Tensor rows = dev.rows(row, row + p->dim(0));
      uploader_.copy(*p, rows);
      row += p->dim(0);
    }
    return dev;
  }

  void download(const Tensor& src, float* dst) override {
    require_f32(src, "download", "the tensor");
    check(cudaMemcpyAsync(dst, src.raw(), src.nbytes(), cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync (download)");
    check(cudaStreamSynchronize(stream_), "the step's kernels");
    profile_.collect();
  }

  void copy_from_host(const float* src, Tensor& dst) override {
    forget_bf16_copy();
    require_f32(dst, "copy_from_host", "the tensor");
    check(cudaMemcpyAsync(dst.raw(), src, dst.nbytes(), cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream_), "copy_from_host");
  }

  [[nodiscard]] std::optional<MemoryInfo> memory_info() const override {
    MemoryInfo info;
    check(cudaMemGetInfo(&info.free_bytes, &info.total_bytes), "cudaMemGetInfo");
    return info;
  }

  [[nodiscard]] bool can_sample() const override { return true; }

  // sample()'s validation and kernels, ids written to dev_ids (the rows' logprobs, when
  // logprobs_out, to logprobs_out_).
  void queue_sampling(const Tensor& logits, std::span<const SampleRowSpec> rows, std::span<const LogitEdit> edits,
                      bool logprobs_out, int32_t* dev_ids) {
    const int64_t num_logit_rows = logits.ndim() == 0 ? 0 : logits.dim(0);
    const int64_t vocab = logits.row_numel();
    args_.clear();
    logprob_args_.clear();
    for (const SampleRowSpec& r : rows) {
      if (r.logit_row < 0 || r.logit_row >= num_logit_rows) {
        fail("sample: logit row ", r.logit_row, " is outside the ", num_logit_rows, " rows");
      }
      if (r.greedy == 0 && !(r.temperature > 0.0f)) fail("sample: temperature must be > 0");
      if (r.edits_begin < 0 || r.edits_begin > r.edits_end || static_cast<size_t>(r.edits_end) > edits.size()) {
        fail("sample: edits [", r.edits_begin, ", ", r.edits_end, ") are outside the ", edits.size(), " given");
      }
      if (r.num_logprobs >= 0) {
        if (r.num_logprobs > kMaxDeviceLogprobs) {
          fail("sample: ", r.num_logprobs, " top logprobs asked of the device, which gives at most ", kMaxDeviceLogprobs);
        }
        if (!logprobs_out) fail("sample: a row asks for logprobs, but there is nowhere to put them");
        logprob_args_.push_back({r.logit_row, static_cast<int32_t>(args_.size()), r.num_logprobs});
      }
      args_.push_back({r.logit_row, r.greedy, r.temperature, r.top_k, r.top_p, r.min_p, r.uniform, r.edits_begin,
                       r.edits_end, r.penalties});
    }
    // The kernel writes where the edits point: they must stay inside the row. (Distinct tokens
    // per row are the caller's promise; a repeat would only race on that one logit.)
    for (const LogitEdit& e : edits) {
      if (e.token < 0 || e.token >= vocab) fail("sample: edit of token ", e.token, " is outside the vocabulary");
    }
    const auto n = static_cast<int64_t>(rows.size());
    const auto num_logprobs = static_cast<int64_t>(logprob_args_.size());
    const auto parts_bytes = static_cast<int64_t>(cuda::sample_parts_bytes(static_cast<int>(n)));
    if (sample_parts_.empty() || sample_parts_.nbytes() < static_cast<size_t>(parts_bytes)) {
      sample_parts_ = scratch(DType::I32, {parts_bytes / 4});
    }
    if (num_logprobs > 0 && (raw_logits_.empty() || raw_logits_.numel() < num_logprobs * vocab)) {
      raw_logits_ = scratch(DType::F32, {num_logprobs, vocab});
    }
    const auto logprobs_bytes = static_cast<int64_t>(num_logprobs * sizeof(DeviceLogprobs));
    if (num_logprobs > 0 && (logprobs_out_.empty() || logprobs_out_.nbytes() < static_cast<size_t>(logprobs_bytes))) {
      logprobs_out_ = scratch(DType::I32, {logprobs_bytes / 4});
    }
    bool any_cut_offs = false;
    for (const SampleRowArgs& a : args_) any_cut_offs = any_cut_offs || !cuda::sample_row_is_split(a);
    const SampleRowArgs* dev_rows = mirror_.get(args_.data(), args_.size());
    const cuda::LogprobsRowArgs* dev_logprob_rows =
        num_logprobs > 0 ? mirror_.get(logprob_args_.data(), logprob_args_.size()) : nullptr;
    {
      const OpProfile::Scope profile_scope(profile_, "sample");
      if (num_logprobs > 0) {  // the logprobs describe the logits before the edits
        cuda::gather_logit_rows(logits.data<float>(), vocab, dev_logprob_rows, static_cast<int>(num_logprobs),
                                raw_logits_.data<float>(), stream_);
      }
      if (!edits.empty()) {
        cuda::edit_logits(logits.data<float>(), vocab, dev_rows, static_cast<int>(n),
                          mirror_.get(edits.data(), edits.size()), stream_);
      }
      cuda::sample(logits.data<float>(), logits.row_numel(), dev_rows, static_cast<int>(n), any_cut_offs,
                   sample_parts_.raw(), dev_ids, stream_);
      if (num_logprobs > 0) {
        cuda::raw_logprobs(raw_logits_.data<float>(), vocab, dev_logprob_rows, static_cast<int>(num_logprobs),
                           dev_ids, reinterpret_cast<DeviceLogprobs*>(logprobs_out_.raw()),
                           stream_);
      }
    }
  }

  void sample(const Tensor& logits, std::span<const SampleRowSpec> rows, std::span<const LogitEdit> edits,
              int32_t* ids, DeviceLogprobs* logprobs) override {
    forget_bf16_copy();
    require_f32(logits, "sample", "the logits");
    if (rows.empty()) return;
    const auto n = static_cast<int64_t>(rows.size());
    if (sampled_ids_.empty() || sampled_ids_.numel() < n) sampled_ids_ = scratch(DType::I32, {n});
    queue_sampling(logits, rows, edits, logprobs != nullptr, sampled_ids_.data<int32_t>());
    const int64_t vocab = logits.row_numel();
    const auto num_logprobs = static_cast<int64_t>(logprob_args_.size());
    const auto logprobs_bytes = static_cast<int64_t>(num_logprobs * sizeof(DeviceLogprobs));
    check(cudaMemcpyAsync(ids, sampled_ids_.raw(), static_cast<size_t>(n) * sizeof(int32_t),
                          cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpyAsync (sampled ids)");
    if (num_logprobs > 0) {
      logprobs_host_.resize(static_cast<size_t>(num_logprobs));
      check(cudaMemcpyAsync(logprobs_host_.data(), logprobs_out_.raw(), static_cast<size_t>(logprobs_bytes),
                            cudaMemcpyDeviceToHost, stream_),
            "cudaMemcpyAsync (logprobs)");
    }
    check(cudaStreamSynchronize(stream_), "the step's kernels");
    profile_.collect();
    for (int64_t l = 0; l < num_logprobs; ++l) {
      const cuda::LogprobsRowArgs& a = logprob_args_[static_cast<size_t>(l)];
      if (ids[a.sample_row] >= 0) {
        logprobs[a.sample_row] = logprobs_host_[static_cast<size_t>(l)];
      } else if (!edits.empty()) {  // handed back: the host samples it from its raw logits
        check(cudaMemcpyAsync(logits.data<float>() + static_cast<int64_t>(a.logit_row) * vocab,
                              raw_logits_.data<float>() + l * vocab, static_cast<size_t>(vocab) * sizeof(float),
                              cudaMemcpyDeviceToDevice, stream_),
              "cudaMemcpyAsync (raw logits back)");
      }
    }
  }

  [[nodiscard]] bool can_sample_async() const override { return true; }

  // The ids go to ahead_ids_, whose address never changes (graphs read the placeholders
  // there), and from it to a pinned slot that collect_sampled reads once its event passed.
  void sample_async(const Tensor& logits, std::span<const SampleRowSpec> rows,
                    std::span<const LogitEdit> edits) override {
    forget_bf16_copy();
    require_f32(logits, "sample_async", "the logits");
    if (ahead_pending_ >= kAheadSlots) fail("sample_async: ", kAheadSlots, " samplings already wait to be collected");
    const auto n = static_cast<int64_t>(rows.size());
    if (n > kMaxAheadRows) fail("sample_async: ", n, " rows, more than the ", kMaxAheadRows, " it can hold");
    for (const SampleRowSpec& r : rows) {
      if (r.num_logprobs >= 0) fail("sample_async: a row asks for logprobs, which only sample() gives");
    }
    if (n > 0) queue_sampling(logits, rows, edits, false, ahead_ids_.data<int32_t>());
    const int slot = (ahead_next_ + ahead_pending_) % kAheadSlots;
    AheadSlot& a = ahead_[static_cast<size_t>(slot)];
    if (a.pinned == nullptr) {
      check(cudaMallocHost(&a.pinned, kMaxAheadRows * sizeof(int32_t)), "cudaMallocHost (sampled ids)");
      check(cudaEventCreateWithFlags(&a.done, cudaEventDisableTiming), "cudaEventCreate (sampled ids)");
    }
    if (n > 0) {
      check(cudaMemcpyAsync(a.pinned, ahead_ids_.raw(), static_cast<size_t>(n) * sizeof(int32_t), cudaMemcpyDeviceToHost,
                            stream_),
            "cudaMemcpyAsync (sampled ids)");
    }
    check(cudaEventRecord(a.done, stream_), "cudaEventRecord (sampled ids)");
    a.rows = n;
    ++ahead_pending_;
    ahead_rows_ = n;  // the placeholders embedding() may be given now
  }

  void collect_sampled(int32_t* ids) override {
    if (ahead_pending_ == 0) fail("collect_sampled: nothing was sampled ahead");
    AheadSlot& a = ahead_[static_cast<size_t>(ahead_next_)];
    check(cudaEventSynchronize(a.done), "the step's kernels");
    profile_.collect();
    std::memcpy(ids, a.pinned, static_cast<size_t>(a.rows) * sizeof(int32_t));
    ahead_next_ = (ahead_next_ + 1) % kAheadSlots;
    --ahead_pending_;
  }

  // Decode graphs are on (verified on the H200: DecodeGraphs.* and the engine tests);
  // --enforce-eager turns them off per engine, PAGODA_CUDA_GRAPHS=0 for the whole process.
  [[nodiscard]] bool can_capture() const override {
    return !env_off("PAGODA_CUDA_GRAPHS");
  }

  void begin_capture(std::span<const HostSpan> inputs) override {
    forget_bf16_copy();
    std::vector<GraphInput> ins;
    for (const HostSpan& in : inputs) {
      if (in.row_bytes > 0 && in.bytes % in.row_bytes != 0) fail("begin_capture: a table input of ", in.bytes,
                                                                   " bytes is no whole number of ", in.row_bytes, "-byte rows");
      ins.push_back({in.data, in.bytes, nullptr, 0, in.row_bytes});
    }
    mirror_.begin_capture(std::move(ins));
    arena_->begin_recording();
    profile_.suspend(true);
    capturing_ = true;
    bf16_recorded_ = bf16_recorded_ || !bf16_.empty();
    // Relaxed: the mirror may cudaMalloc graph buffers while the stream records.
    const cudaError_t status = cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed);
    if (status != cudaSuccess) {
      mirror_.abort_capture();
      profile_.suspend(false);
      capturing_ = false;
      check(status, "cudaStreamBeginCapture");
    }
  }

  [[nodiscard]] int end_capture() override {
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream_, &graph);
    profile_.suspend(false);
    capturing_ = false;
    forget_bf16_copy();
    if (ended != cudaSuccess) {
      mirror_.abort_capture();
      check(ended, "cudaStreamEndCapture");
    }
    if (env_flag("PAGODA_GRAPH_STATS")) print_graph_stats(graph);
    auto g = std::make_unique<Graph>(mirror_.end_capture());
    // The ops' allocations came from the capture arena, so the graph holds no memory nodes;
    // should one slip in, the flag keeps relaunching it legal (freed at the next launch).
    const cudaError_t made = cudaGraphInstantiateWithFlags(&g->exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch);
    cudaGraphDestroy(graph);
    check(made, "cudaGraphInstantiate");
    check(cudaGraphUpload(g->exec, stream_), "cudaGraphUpload");
    graphs_.push_back(std::move(g));
    return static_cast<int>(graphs_.size()) - 1;
  }

  void abort_capture() override {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream_, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone) {
      cudaGraph_t graph = nullptr;
      cudaStreamEndCapture(stream_, &graph);
      if (graph != nullptr) cudaGraphDestroy(graph);
    }
    cudaGetLastError();  // the failed capture's error is reported by whoever threw
    mirror_.abort_capture();
    profile_.suspend(false);
    capturing_ = false;
    forget_bf16_copy();
  }

  void release_graph(int graph) override {
    if (graph >= 0 && static_cast<size_t>(graph) < graphs_.size()) graphs_[static_cast<size_t>(graph)].reset();
    if (std::all_of(graphs_.begin(), graphs_.end(), [](const auto& g) { return g == nullptr; })) {
      held_for_graphs_.clear();
      bf16_recorded_ = capturing_;
    }
  }

  void replay(int graph, size_t live_row_bytes) override {
    if (graph < 0 || static_cast<size_t>(graph) >= graphs_.size() || graphs_[static_cast<size_t>(graph)] == nullptr) {
      fail("replay: no graph ", graph);
    }
    const OpProfile::Scope profile_scope(profile_, "graph (decode step)");
    forget_bf16_copy();
    Graph& g = *graphs_[static_cast<size_t>(graph)];
    g.arrays.upload(stream_, live_row_bytes);
    // PAGODA_PROFILE_REPLAY=N: the N-th replay (from 1) is the one range a profiler started
    // with --profile-from-start off sees (ncu --graph-profiling node: each kernel of one
    // decode step timed alone; tools/device/run.sh ncu).
    const bool profiled = ++replays_ == profile_replay_;
    if (profiled) check(cudaProfilerStart(), "cudaProfilerStart");
    check(cudaGraphLaunch(g.exec, stream_), "cudaGraphLaunch");
    if (profiled) check(cudaProfilerStop(), "cudaProfilerStop");
  }

  // Only where the GEMV reads w (a few rows: the weight's streaming is the matmul's whole
  // cost) and the attention before it reads little KV cache, at most half of L2 (checked on
  // the device, prefetch.cu): a long context keeps the bus busy and would push w out again.
  void prefetch(const Tensor& w, const AttentionMetadata& before, const Tensor& k_cache) override {
    if (l2_prefetch_bytes_ == 0 || batch_invariant_ || before.num_tokens > cuda::kMaxGemvRows ||
        before.num_seqs < 1 || k_cache.ndim() != 4) {
      return;
    }
    const int64_t slots = std::max<int64_t>(1, k_cache.dim(0) * k_cache.dim(1));
    const auto slot_bytes = static_cast<int64_t>(k_cache.nbytes()) / slots;
    const int64_t max_context = l2_bytes_ / 2 / std::max<int64_t>(1, 2 * slot_bytes);  // K and V
    const OpProfile::Scope profile_scope(profile_, "prefetch");
    cuda::prefetch_l2(w.raw(), std::min(static_cast<int64_t>(w.nbytes()), l2_prefetch_bytes_),
                      mirror_.get(before.seq_lens, static_cast<size_t>(before.num_seqs)), before.num_seqs, max_context,
                      num_sms_, stream_);
  }

  void embedding(const Tensor& table, const int32_t* ids, int n, Tensor& out) override {
    const OpProfile::Scope profile_scope(profile_, "embedding");
    forget_bf16_copy();
    const int64_t dim = embedding_dim(table, ids, n, out, static_cast<int>(ahead_rows_));
    const int32_t* dev_ids = mirror_.get(ids, static_cast<size_t>(n));
    const Ahead ahead{ahead_ids_.data<int32_t>(), static_cast<int32_t>(kMaxAheadRows)};
    if (table.dtype() == DType::BF16) {
      embedding_bf16(table.data<__nv_bfloat16>(), dev_ids, ahead, n, dim, out.data<float>(), stream_);
    } else if (table.dtype() == DType::F32) {
      embedding_f32(table.data<float>(), dev_ids, ahead, n, dim, out.data<float>(), stream_);
    } else {
      fail("embedding (CUDA): table must be BF16 or F32 (upload() it), not ", dtype_name(table.dtype()));
    }
  }

  void rms_norm(const Tensor& x, const Tensor& weight, float eps, Tensor& out) override {
    const OpProfile::Scope profile_scope(profile_, "rms_norm");
    forget_bf16_copy();
    const int64_t rows = rows_of(x, weight, "rms_norm", "weight");
    require_f32(out, "rms_norm", "out");
    require_same(x, out, "rms_norm");
    cuda::rms_norm(x.data<float>(), weight.data<float>(), eps, rows, weight.numel(), out.data<float>(),
                   bf16_copy_of(out), stream_);
  }

  void matmul(const Tensor& x, const Tensor& w, Tensor& out) override {
    const OpProfile::Scope profile_scope(profile_, matmul_profile_name("matmul", w).c_str());
    const auto [n, k, m] = matmul_shape(x, w, out);
    require_dtype(w, DType::BF16, "matmul (CUDA)", "the weight (upload() it)");
    product(x, n, k, w, m, out, false);
  }

  // Decode-sized rows (gemv_fused_fits) run the norm, the gate and the residual add inside
  // the GEMV; other shapes run the composition, with the residual add in cuBLASLt's epilogue.
  void fused_matmul(const Tensor& x, const MatmulFusion& fusion, const Tensor& w, Tensor& out) override {
    const OpProfile::Scope profile_scope(profile_, matmul_profile_name("fused_matmul", w).c_str());
    const auto [n, m] = op_checks::fused_matmul_shape(x, fusion, w, out);
    require_dtype(w, DType::BF16, "fused_matmul (CUDA)", "the weight (upload() it)");
    const int64_t k = x.dim(1);
    const bool gated = fusion.gated != GatedActivation::None;
    if (!fuse_decode_ops_) {
      Backend::fused_matmul(x, fusion, w, out);
      return;
    }
    if (fusion.norm == nullptr && !gated) {
      product(x, n, k, w, m, out, fusion.accumulate);
      return;
    }
    cuda::GemvFusion f;
    if (fusion.norm != nullptr) {
      f.x_f32 = x.data<float>();
      f.norm_weight = fusion.norm->data<float>();
      f.eps = fusion.eps;
    }
    if (gated) f.gate = fusion.gated == GatedActivation::Silu ? cuda::GemvGate::Silu : cuda::GemvGate::Gelu;
    f.accumulate = fusion.accumulate;
    // (Batch-invariant mode keeps one GEMM algorithm for every n: gemm.h.)
    if (batch_invariant_ || !cuda::gemv_fused_fits(n, k, w.data<__nv_bfloat16>(), m, f)) {
      Backend::fused_matmul(x, fusion, w, out);
      return;
    }
    if (fusion.norm == nullptr) {
      f.x = bf16_input(x, n * k);  // the kernel reads the BF16 buffer: it cannot also write out's copy
    } else if (gated) {
      f.out_bf16 = bf16_copy_of(out);  // the down projection's input
    }
    cuda::gemv_fused(n, k, w.data<__nv_bfloat16>(), m, out.data<float>(), f, stream_);
    if (f.out_bf16 == nullptr) forget_bf16_copy_if_overwritten(out);
  }

  void add_bias(Tensor& x, const Tensor& bias) override {
    const OpProfile::Scope profile_scope(profile_, "add_bias");
    forget_bf16_copy();
    const int64_t rows = rows_of(x, bias, "add_bias", "bias");
    cuda::add_bias(x.data<float>(), bias.data<float>(), rows, bias.numel(), stream_);
  }

  void add(Tensor& x, const Tensor& y) override {
    const OpProfile::Scope profile_scope(profile_, "add");
    forget_bf16_copy();
    require_f32(x, "add", "x");
    require_f32(y, "add", "y");
    require_same(x, y, "add");
    cuda::add(x.data<float>(), y.data<float>(), x.numel(), stream_);
  }

  void scale(Tensor& x, float s) override {
    const OpProfile::Scope profile_scope(profile_, "scale");
    forget_bf16_copy();
    require_f32(x, "scale", "x");
    cuda::scale(x.data<float>(), s, x.numel(), stream_);
  }

  void softcap(Tensor& x, float cap) override {
    const OpProfile::Scope profile_scope(profile_, "softcap");
    forget_bf16_copy();
    require_f32(x, "softcap", "x");
    if (!(cap > 0)) fail("softcap: cap must be positive");
    cuda::softcap(x.data<float>(), cap, x.numel(), stream_);
  }

  void silu_mul(const Tensor& gate, const Tensor& up, Tensor& out) override {
    const OpProfile::Scope profile_scope(profile_, "silu_mul");
    forget_bf16_copy();
    check_gated(gate, up, out, "silu_mul");
    cuda::silu_mul(gate.data<float>(), up.data<float>(), out.data<float>(), bf16_copy_of(out), gate.numel(), stream_);
  }

  void gelu_mul(const Tensor& gate, const Tensor& up, Tensor& out) override {
    const OpProfile::Scope profile_scope(profile_, "gelu_mul");
    forget_bf16_copy();
    check_gated(gate, up, out, "gelu_mul");
    cuda::gelu_mul(gate.data<float>(), up.data<float>(), out.data<float>(), bf16_copy_of(out), gate.numel(), stream_);
  }

  void silu_mul_stacked(const Tensor& gate_up, Tensor& out) override {
    const OpProfile::Scope profile_scope(profile_, "silu_mul");
    forget_bf16_copy();
    const int64_t d = gated_stacked_width(gate_up, out, "silu_mul_stacked");
    cuda::silu_mul_stacked(gate_up.data<float>(), out.dim(0), d, out.data<float>(), bf16_copy_of(out), stream_);
  }

  void gelu_mul_stacked(const Tensor& gate_up, Tensor& out) override {
    const OpProfile::Scope profile_scope(profile_, "gelu_mul");
    forget_bf16_copy();
    const int64_t d = gated_stacked_width(gate_up, out, "gelu_mul_stacked");
    cuda::gelu_mul_stacked(gate_up.data<float>(), out.dim(0), d, out.data<float>(), bf16_copy_of(out), stream_);
  }

  void split_columns(const Tensor& x, std::span<Tensor* const> parts) override {
    const OpProfile::Scope profile_scope(profile_, "split_columns");
    forget_bf16_copy();
    check_split_columns(x, parts);
    if (parts.size() > static_cast<size_t>(cuda::kMaxColumnParts)) fail("split_columns: at most 4 parts");
    cuda::ColumnPart cols[cuda::kMaxColumnParts];
    for (size_t i = 0; i < parts.size(); ++i) cols[i] = {parts[i]->data<float>(), parts[i]->dim(1)};
    cuda::split_columns(x.data<float>(), x.dim(0), cols, static_cast<int>(parts.size()), stream_);
  }

  void rope(Tensor& x, const int32_t* positions, const RopeConfig& config) override {
    const OpProfile::Scope profile_scope(profile_, "rope");
    forget_bf16_copy();
    check_rope(x, config);
    const int32_t* dev_pos = mirror_.get(positions, static_cast<size_t>(x.dim(0)));
    const float* dev_freq = mirror_.get(config.inv_freq, static_cast<size_t>(config.rot_dim / 2));
    cuda::rope(x.data<float>(), x.dim(0), x.dim(1), x.dim(2), dev_pos, dev_freq, config.rot_dim, config.neox,
               config.attention_factor, stream_);
  }

  // BF16, the model's dtype (vLLM's kv-cache-dtype "auto"): half the bytes every attention
  // step reads. write_kv and paged_attention also take F32 caches.
  [[nodiscard]] DType kv_cache_dtype() const override { return DType::BF16; }

  void write_kv(const Tensor& k, const Tensor& v, Tensor& k_cache, Tensor& v_cache,
                const AttentionMetadata& meta) override {
    const OpProfile::Scope profile_scope(profile_, "write_kv");
    forget_bf16_copy();
    const CacheDims dims = cache_dims(k_cache, v_cache, "write_kv");
    check_write_kv(k, v, meta, dims);
    const int64_t row = dims.kv_heads * dims.head_dim;
    check_slots(meta, dims);
    const int64_t* slots = mirror_.get(meta.slot_mapping, static_cast<size_t>(meta.num_tokens));
    cuda::write_kv(k.data<float>(), v.data<float>(), k_cache.raw(), v_cache.raw(), dims.dtype == DType::BF16, slots,
                   meta.num_tokens, row, stream_);
  }

  void split_rope_write_kv(const Tensor& qkv, const HeadNorms& norms, const int32_t* positions,
                           const RopeConfig& rotary, Tensor& q_out, Tensor& k_cache, Tensor& v_cache,
                           const AttentionMetadata& meta) override {
    const CacheDims dims = cache_dims(k_cache, v_cache, "split_rope_write_kv");
    if (!cuda::split_rope_write_kv_fits(dims.head_dim)) {
      Backend::split_rope_write_kv(qkv, norms, positions, rotary, q_out, k_cache, v_cache, meta);
      return;
    }
    const OpProfile::Scope profile_scope(profile_, "split_rope_write_kv");
    forget_bf16_copy();
    const int64_t heads = op_checks::split_rope_write_kv_heads(qkv, norms, rotary, q_out, meta, dims);
    check_slots(meta, dims);
    const cuda::QkvLayout layout{heads,        dims.kv_heads, static_cast<int>(dims.head_dim),
                                 rotary.rot_dim, rotary.neox,   rotary.attention_factor};
    const auto n = static_cast<size_t>(meta.num_tokens);
    cuda::split_rope_write_kv(qkv.data<float>(), meta.num_tokens, layout, mirror_.get(positions, n),
                              mirror_.get(rotary.inv_freq, static_cast<size_t>(rotary.rot_dim / 2)),
                              norms.q != nullptr ? norms.q->data<float>() : nullptr,
                              norms.k != nullptr ? norms.k->data<float>() : nullptr, norms.eps, q_out.data<float>(),
                              k_cache.raw(), v_cache.raw(), dims.dtype == DType::BF16,
                              mirror_.get(meta.slot_mapping, n), stream_);
  }

  void paged_attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache, const AttentionMetadata& meta,
                       float scale, int sliding_window, float softcap, Tensor& out) override {
    const OpProfile::Scope profile_scope(profile_, "paged_attention");
    forget_bf16_copy();
    const CacheDims dims = cache_dims(k_cache, v_cache, "paged_attention");
    const AttentionArgs a = attention_args(q, meta, scale, sliding_window, softcap, out, dims);
    const PagedKv layout = paged_kv(k_cache, v_cache, dims);
    // Sequences with several new tokens (prefill chunks) go to the tensor cores; decodes, and
    // everything in batch-invariant mode (one kernel for every row, however it is batched),
    // to the CUDA-core kernel, which splits long contexts.
    const bool tensor_cores = !batch_invariant_ && cuda::prefill_attention_fits(layout, a.num_heads);
    if (tensor_cores) attend_on_tensor_cores(a, layout, meta);
    attend_on_cuda_cores(a, layout, meta, tensor_cores ? 1 : meta.num_tokens);
    // Both kernels wrote out's BF16 copy beside it, so the o projection converts nothing.
    remember_bf16_copy(out);
  }

  // A batch of decodes in one kernel (decode_attention), where fused_decode_attention_: at
  // batch 1 the rope and KV write as a kernel of their own cost more in launch and round
  // trip through memory than in work. Anything else (a prefill chunk in the batch, a GQA
  // group of more than 8) takes the composition of split_rope_write_kv and paged_attention,
  // whose bits the kernel means to match (see fused_decode_attention_).
  void attend_from_qkv(const Tensor& qkv, const HeadNorms& norms, const int32_t* positions, const RopeConfig& rotary,
                       Tensor& q_scratch, Tensor& k_cache, Tensor& v_cache, const AttentionMetadata& meta, float scale,
                       int sliding_window, float softcap, Tensor& out) override {
    const CacheDims dims = cache_dims(k_cache, v_cache, "attend_from_qkv");
    const int64_t heads = op_checks::split_rope_write_kv_heads(qkv, norms, rotary, q_scratch, meta, dims);
    if (!fused_decode_attention_ || !all_decodes(meta) || !cuda::split_rope_write_kv_fits(dims.head_dim) ||
        !cuda::decode_attention_fits(static_cast<int>(heads), static_cast<int>(dims.kv_heads), dims.head_dim)) {
      Backend::attend_from_qkv(qkv, norms, positions, rotary, q_scratch, k_cache, v_cache, meta, scale,
                               sliding_window, softcap, out);
      return;
    }
    const OpProfile::Scope profile_scope(profile_, "attend_from_qkv");
    forget_bf16_copy();
    check_slots(meta, dims);
    const AttentionArgs a = attention_args(q_scratch, meta, scale, sliding_window, softcap, out, dims);
    const auto n = static_cast<size_t>(meta.num_tokens);
    cuda::QkvSource source{};
    source.qkv = qkv.data<float>();
    source.layout = {heads, dims.kv_heads, static_cast<int>(dims.head_dim), rotary.rot_dim, rotary.neox,
                     rotary.attention_factor};
    source.positions = mirror_.get(positions, n);
    source.inv_freq = mirror_.get(rotary.inv_freq, static_cast<size_t>(rotary.rot_dim / 2));
    source.q_norm = norms.q != nullptr ? norms.q->data<float>() : nullptr;
    source.k_norm = norms.k != nullptr ? norms.k->data<float>() : nullptr;
    source.eps = norms.eps;
    source.slot_mapping = mirror_.get(meta.slot_mapping, n);
    attend_on_cuda_cores(a, paged_kv(k_cache, v_cache, dims), meta, 1, &source);
    remember_bf16_copy(out);
  }

 private:
  // Sequences of meta with more than one new token, on the tensor cores (attention_prefill.cu).
  void attend_on_tensor_cores(const AttentionArgs& a, const PagedKv& layout, const AttentionMetadata& meta) {
    AttentionArgs p = a;
    p.tile_tokens = cuda::prefill_tile_tokens(a.num_heads, static_cast<int>(layout.kv_heads));
    p.heads_per_block = a.num_heads / static_cast<int>(layout.kv_heads);
    attention_tiles(meta.query_start_loc, meta.num_seqs, p.tile_tokens, prefill_tiles_, 2);
    if (prefill_tiles_.empty()) return;
    p.tiles = mirror_.get(prefill_tiles_.data(), prefill_tiles_.size());
    p.num_tiles = static_cast<int>(prefill_tiles_.size() / 2);
    cuda::prefill_attention(p, layout, stream_);
  }

  // paged_attention's arguments but for the work split; q is not read by decode_attention.
  AttentionArgs attention_args(const Tensor& q, const AttentionMetadata& meta, float scale, int sliding_window,
                               float softcap, Tensor& out, const CacheDims& dims) {
    const int64_t num_heads = attention_heads(q, out, meta, dims);
    check_metadata(meta, dims.block_size, dims.num_blocks);
    AttentionArgs a{};
    a.q = q.data<float>();
    a.out = out.data<float>();
    a.out_bf16 = bf16_buffer(out.numel());
    a.num_tokens = meta.num_tokens;
    a.num_seqs = meta.num_seqs;
    a.chunks_on_tensor_cores = attention_mma_;
    a.num_heads = static_cast<int>(num_heads);
    a.query_start_loc = mirror_.get(meta.query_start_loc, static_cast<size_t>(meta.num_seqs) + 1);
    a.seq_lens = mirror_.get(meta.seq_lens, static_cast<size_t>(meta.num_seqs));
    a.block_tables = mirror_.get(meta.block_tables, static_cast<size_t>(meta.num_seqs) * meta.max_blocks_per_seq);
    a.max_blocks_per_seq = meta.max_blocks_per_seq;
    a.scale = scale;
    a.sliding_window = sliding_window;
    a.softcap = softcap;
    return a;
  }

  static PagedKv paged_kv(const Tensor& k_cache, const Tensor& v_cache, const CacheDims& dims) {
    return {k_cache.raw(), v_cache.raw(), dims.dtype == DType::BF16, dims.block_size, dims.kv_heads, dims.head_dim};
  }

  // Whether every sequence of meta has exactly one new token.
  static bool all_decodes(const AttentionMetadata& meta) {
    if (meta.num_tokens != meta.num_seqs) return false;
    for (int s = 0; s < meta.num_seqs; ++s) {
      if (meta.query_start_loc[s + 1] - meta.query_start_loc[s] != 1) return false;
    }
    return true;
  }

  // Sequences of meta with up to max_new new tokens, on CUDA cores (attention.cu), their
  // contexts split when the batch is too small to fill the GPU (not in batch-invariant mode).
  // With source (a batch of decodes), the kernel makes its inputs from the stacked projection.
  void attend_on_cuda_cores(AttentionArgs a, const PagedKv& layout, const AttentionMetadata& meta, int max_new,
                            const cuda::QkvSource* source = nullptr) {
    int longest = 0;
    for (int s = 0; s < meta.num_seqs; ++s) {
      const int num_new = meta.query_start_loc[s + 1] - meta.query_start_loc[s];
      if (num_new <= max_new) longest = std::max(longest, num_new);
    }
    if (longest == 0) return;
    const AttentionTiling tiling = attention_tiling(a.num_heads, static_cast<int>(layout.kv_heads), longest);
    attention_tiles(meta.query_start_loc, meta.num_seqs, tiling.tile_tokens, tiles_, 0, max_new);
    a.tiles = mirror_.get(tiles_.data(), tiles_.size());
    a.num_tiles = static_cast<int>(tiles_.size() / 2);
    a.tile_tokens = tiling.tile_tokens;
    a.heads_per_block = tiling.heads_per_block;
    AttentionSplit split;
    if (!batch_invariant_) {
      split.num_splits =
          attention_splits(a.num_tiles * (a.num_heads / a.heads_per_block), num_sms_, max_attention_splits_);
      split.min_keys = min_split_keys_;
    }
    Tensor workspace;
    if (split.num_splits > 1) {
      workspace = scratch(DType::F32, {split.num_splits, meta.num_tokens, a.num_heads, layout.head_dim + 2});
      split.workspace = workspace.data<float>();
      // The last split of each (tile, head group) combines them, saving a kernel a layer.
      const int64_t pairs = int64_t{a.num_tiles} * (a.num_heads / a.heads_per_block);
      if (fold_combine_ && pairs <= kSplitCounters) split.counters = split_counters_.data<int32_t>();
    }
    if (source != nullptr) {
      cuda::decode_attention(a, layout, split, *source, stream_);
    } else {
      cuda::paged_attention(a, layout, split, stream_);
    }
  }

  static std::shared_ptr<StreamOwner> init_device(int device) {
    check(cudaSetDevice(device), "cudaSetDevice");
    // Keep freed memory in the pool: the decoder allocates its activations every step.
    cudaMemPool_t pool = nullptr;
    check(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool");
    uint64_t keep = UINT64_MAX;
    check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), "cudaMemPoolSetAttribute");
    return std::make_shared<StreamOwner>();
  }

  // The GPU trusts these arrays, so they are checked here as the CPU backend checks them.
  static void check_slots(const AttentionMetadata& meta, const CacheDims& dims) {
    const int64_t num_slots = dims.num_blocks * dims.block_size;
    for (int t = 0; t < meta.num_tokens; ++t) {
      PAGODA_CHECK(meta.slot_mapping[t] >= 0 && meta.slot_mapping[t] < num_slots);
    }
  }
  static void check_metadata(const AttentionMetadata& meta, int64_t block_size, int64_t num_blocks) {
    PAGODA_CHECK(meta.num_seqs > 0 && meta.query_start_loc[0] == 0 &&
                 meta.query_start_loc[meta.num_seqs] == meta.num_tokens);
    for (int s = 0; s < meta.num_seqs; ++s) {
      const int32_t q_begin = meta.query_start_loc[s], q_end = meta.query_start_loc[s + 1];
      PAGODA_CHECK(0 <= q_begin && q_begin <= q_end && q_end <= meta.num_tokens);
      PAGODA_CHECK(meta.seq_lens[s] >= q_end - q_begin);
      const int64_t used = (meta.seq_lens[s] + block_size - 1) / block_size;
      PAGODA_CHECK(used <= meta.max_blocks_per_seq);
      const int32_t* blocks = meta.block_tables + static_cast<int64_t>(s) * meta.max_blocks_per_seq;
      for (int64_t j = 0; j < used; ++j) PAGODA_CHECK(blocks[j] >= 0 && blocks[j] < num_blocks);
    }
  }

  // bf16_ holds the BF16 copy of the F32 tensor at bf16_source_ until any op other than a
  // matmul runs (any of them may write device memory), a matmul writes over the source, or
  // scratch() hands out the source's memory again.
  void forget_bf16_copy() { bf16_source_ = nullptr; }
  // For ops whose output usually feeds a matmul next (norms, gated activations): where they
  // write the BF16 copy of out along with out itself.
  // out (+)= x @ w^T: the GEMV for decode-sized n, else cuBLASLt.
  void product(const Tensor& x, int64_t n, int64_t k, const Tensor& w, int64_t m, Tensor& out, bool accumulate) {
    const __nv_bfloat16* xb = bf16_input(x, n * k);
    if (!batch_invariant_ && cuda::gemv_fits(xb, n, k, w.data<__nv_bfloat16>())) {
      if (accumulate) {
        cuda::GemvFusion f;
        f.x = xb;
        f.accumulate = true;
        cuda::gemv_fused(n, k, w.data<__nv_bfloat16>(), m, out.data<float>(), f, stream_);
      } else {
        cuda::gemv(xb, n, k, w.data<__nv_bfloat16>(), m, out.data<float>(), stream_);
      }
    } else {
      gemm_.run(xb, n, k, w.data<__nv_bfloat16>(), m, out.data<float>(), accumulate);
    }
    forget_bf16_copy_if_overwritten(out);
  }

  // x's BF16 copy (numel elements): consecutive matmuls of one input (q, k, v; gate, up)
  // convert it once.
  const __nv_bfloat16* bf16_input(const Tensor& x, int64_t numel) {
    if (bf16_source_ != x.raw() || bf16_source_numel_ != numel) {
      to_bf16(x.data<float>(), bf16_buffer(numel), numel, stream_);
      remember_bf16_copy(x);
      bf16_source_numel_ = numel;
    }
    return bf16_.data<__nv_bfloat16>();
  }

  // After an op wrote out: a BF16 copy of memory it overlaps is stale.
  void forget_bf16_copy_if_overwritten(const Tensor& out) {
    const auto* o = static_cast<const uint8_t*>(out.raw());
    const auto* src = static_cast<const uint8_t*>(bf16_source_);
    if (src != nullptr && o < src + bf16_source_numel_ * 4 && src < o + out.nbytes()) forget_bf16_copy();
  }

  [[nodiscard]] std::string matmul_profile_name(const char* op, const Tensor& w) const {
    if (!profile_.enabled()) return {};
    return std::string(op) + " [" + std::to_string(w.ndim() == 2 ? w.dim(0) : 0) + " x " +
           std::to_string(w.ndim() == 2 ? w.dim(1) : 0) + "]";
  }

  __nv_bfloat16* bf16_copy_of(const Tensor& out) {
    __nv_bfloat16* copy = bf16_buffer(out.numel());
    remember_bf16_copy(out);
    return copy;
  }
  // bf16_ now holds out's BF16 copy.
  void remember_bf16_copy(const Tensor& out) {
    bf16_source_ = out.raw();
    bf16_source_numel_ = out.numel();
  }

  // The BF16 copy of a matmul's activations; grows, never shrinks (one stream: reuse is safe).
  // (An empty Tensor has numel() 1, the product of no dimensions: hence the empty() tests.)
  // Graphs record its address. So it is cudaMalloc'ed, not the pool's (grown while a graph
  // is being captured, a pool allocation would become the graph's own, freed at its next
  // launch), and a buffer a graph recorded is kept, when it grows, until the graphs go:
  // back in the pool it would be handed to the next allocation, which every replay would
  // then overwrite (tests/backend/cuda_graph_memory_test.cpp).
  __nv_bfloat16* bf16_buffer(int64_t n) {
    if (bf16_.empty() || bf16_.numel() < n) {
      if (bf16_recorded_) held_for_graphs_.push_back(std::move(bf16_));
      bf16_ = outside_pool(DType::BF16, {n});
      bf16_recorded_ = capturing_;
    }
    return bf16_.data<__nv_bfloat16>();
  }

  // PAGODA_GRAPH_STATS=1: a recorded graph's nodes by type and the arena's size, on stderr.
  void print_graph_stats(cudaGraph_t graph) const {
    size_t n = 0;
    check(cudaGraphGetNodes(graph, nullptr, &n), "cudaGraphGetNodes");
    std::vector<cudaGraphNode_t> nodes(n);
    check(cudaGraphGetNodes(graph, nodes.data(), &n), "cudaGraphGetNodes");
    int kernels = 0, memory = 0, copies = 0, other = 0;
    for (cudaGraphNode_t node : nodes) {
      cudaGraphNodeType type{};
      check(cudaGraphNodeGetType(node, &type), "cudaGraphNodeGetType");
      if (type == cudaGraphNodeTypeKernel) {
        ++kernels;
      } else if (type == cudaGraphNodeTypeMemAlloc || type == cudaGraphNodeTypeMemFree) {
        ++memory;
      } else if (type == cudaGraphNodeTypeMemcpy || type == cudaGraphNodeTypeMemset) {
        ++copies;
      } else {
        ++other;
      }
    }
    std::fprintf(stderr, "graph: %zu nodes: %d kernels, %d memory, %d copies and sets, %d other; arena %zu MiB\n", n,
                 kernels, memory, copies, other, arena_->capacity() >> 20);
  }

  // Device memory that neither the stream's pool nor a graph being captured owns.
  [[nodiscard]] static Tensor outside_pool(DType dtype, Shape shape) {
    const Tensor probe = Tensor::view(dtype, shape, nullptr);
    void* p = nullptr;
    check(cudaMalloc(&p, std::max<size_t>(probe.nbytes(), 1)), "cudaMalloc");
    std::shared_ptr<void> storage(p, [](void* q) { cudaFree(q); });
    return Tensor::shared(dtype, std::move(shape), std::move(storage), p);
  }

  std::shared_ptr<StreamOwner> stream_owner_;
  cudaStream_t stream_;
  // What ops allocate while a graph records (shared with the tensors it handed out).
  std::shared_ptr<CaptureArena> arena_ = std::make_shared<CaptureArena>();
  DeviceMirror mirror_;
  WeightUploader uploader_;
  // PAGODA_BATCH_INVARIANT (as vLLM's VLLM_BATCH_INVARIANT): every row is computed the same
  // way whatever the batch (fixed GEMM algorithms, unsplit attention), at some speed.
  bool batch_invariant_;
  // PAGODA_FUSED_GEMV=0: fused_matmul runs the ops one after the other (for A/B runs, and a
  // way back should the fused GEMV misbehave on some model).
  bool fuse_decode_ops_;
  // PAGODA_FOLD_COMBINE=1: the last split of a split attention combines them, instead of a
  // kernel of its own (off: no faster on an H100, tools/device/NOTES.md).
  bool fold_combine_;
  // The CUDA-core attention's chunks on the tensor cores (attention_mma.cuh); off with
  // PAGODA_ATTENTION_MMA=0 (A/B runs, and the op tests of the F32 arithmetic on BF16 caches).
  // On an H100 (tools/device/NOTES.md, twenty-fourth run): throughput +6.2%, batch-1 decode
  // the same at 1,024 keys with 32 splits (2% slower with 64: a split's fixed cost grew).
  bool attention_mma_;
  // PAGODA_MAX_ATTENTION_SPLITS, PAGODA_MIN_SPLIT_KEYS: the most pieces a context is split
  // into when a batch is too small to fill the GPU, and the fewest keys a piece covers
  // (32 and 32 by default, 64 and 32 with the chunks on the CUDA cores; cuda_kernel_bench
  // attention sweeps them).
  int max_attention_splits_;
  int min_split_keys_;
  // attend_from_qkv in one kernel for batches of decodes: on (1.2% faster batch-1 decode on
  // an H100, tools/device/NOTES.md, twentieth run), off with PAGODA_FUSED_DECODE_ATTENTION=0.
  // In batch-invariant mode too, where a decode row must give the same bits in a mixed batch
  // (the composition) and in a batch of decodes (this kernel): they do (the op test
  // DecodeAttentionFromQkvIsTheComposition and the needle test, on an H100, twenty-first run).
  bool fused_decode_attention_;
  LtGemm gemm_;
  OpProfile profile_;  // PAGODA_PROFILE=1: GPU time per op, printed at exit
  int num_sms_ = 0;
  int64_t l2_bytes_ = 0;
  int64_t l2_prefetch_bytes_ = 0;  // the most of a weight prefetch() asks for (0: off)
  int64_t replays_ = 0;
  int64_t profile_replay_ = env_int("PAGODA_PROFILE_REPLAY", 0, 0, 1 << 30);
  Tensor bf16_;
  // The attention's split counters (AttentionSplit), zero between launches. Fixed in size,
  // so never freed under a graph; a batch with more (tile, head group) pairs than this is
  // combined by a second kernel (it is large enough not to be split at all).
  static constexpr int64_t kSplitCounters = 16384;
  Tensor split_counters_;
  bool bf16_recorded_ = false;            // a graph writes bf16_ (see bf16_buffer)
  bool capturing_ = false;                // between begin_capture and end or abort
  std::vector<Tensor> held_for_graphs_;   // earlier bf16_ buffers graphs still write
  Tensor sampled_ids_;               // sample()'s device output; grows, never shrinks
  // sample_async's ids on the device (fixed: graphs read placeholders there) and the pinned
  // slots they are copied to for collect_sampled, the oldest at ahead_next_.
  static constexpr int64_t kMaxAheadRows = 65536;
  static constexpr int kAheadSlots = 2;
  struct AheadSlot {
    int32_t* pinned = nullptr;
    cudaEvent_t done = nullptr;
    int64_t rows = 0;
  };
  Tensor ahead_ids_ = outside_pool(DType::I32, {kMaxAheadRows});
  std::array<AheadSlot, kAheadSlots> ahead_{};
  int ahead_next_ = 0;
  int ahead_pending_ = 0;
  int64_t ahead_rows_ = 0;  // rows of the last sample_async
  Tensor sample_parts_;              // sample()'s per-part maxima and masses; grows likewise
  std::vector<SampleRowArgs> args_;  // sample()'s rows, reused across steps
  std::vector<cuda::LogprobsRowArgs> logprob_args_;  // sample()'s rows with logprobs
  Tensor raw_logits_;    // those rows' logits before the edits; grows, never shrinks
  Tensor logprobs_out_;  // their DeviceLogprobs on the device; grows likewise
  std::vector<DeviceLogprobs> logprobs_host_;
  std::vector<int32_t> tiles_;          // paged_attention's (seq, first token) pairs: decodes
  std::vector<int32_t> prefill_tiles_;  // the same for the tensor-core kernel: prefill chunks
  struct Graph {
    explicit Graph(CapturedArrays a) : arrays(std::move(a)) {}
    ~Graph() {
      if (exec != nullptr) cudaGraphExecDestroy(exec);
    }
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;
    CapturedArrays arrays;
    cudaGraphExec_t exec = nullptr;
  };
  std::vector<std::unique_ptr<Graph>> graphs_;
  const void* bf16_source_ = nullptr;
  int64_t bf16_source_numel_ = 0;
  std::string name_;
};

}  // namespace

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return n;
}

std::unique_ptr<Backend> make_cuda_backend(int device) { return std::make_unique<CudaBackend>(device); }

}  // namespace pagoda::cuda
