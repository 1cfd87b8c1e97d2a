// The Backend interface on the host: memory is plain host memory and every op is a call
// into the kernels of this folder, run on one thread pool.
#include "backend/cpu/cpu_backend.h"

#include <cstring>
#include <string>

#include "backend/cpu/attention.h"
#include "backend/op_checks.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/norm_act.h"
#include "backend/cpu/rope.h"
#include "backend/cpu/vec_dot.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace pagoda {

namespace cpu {
namespace {

using namespace op_checks;

// A 2-d weight's rows must be whole blocks, or rows could not be addressed.
void require_whole_blocks(const Tensor& w, const char* op) {
  const int block = dtype_info(w.dtype()).block_size;
  if (w.dim(1) % block != 0) {
    fail(op, ": rows of ", w.dim(1), " elements are not whole ", dtype_name(w.dtype()), " blocks of ", block);
  }
}

class CpuBackend final : public Backend {
 public:
  CpuBackend(int num_threads, const VecDotKernels& kernels) : pool_(num_threads), kernels_(kernels) {}

  [[nodiscard]] std::string name() const override { return std::string("cpu-") + kernels_.isa; }

  [[nodiscard]] Tensor alloc(DType dtype, Shape shape) override { return Tensor::host(dtype, std::move(shape)); }
  [[nodiscard]] Tensor upload(const Tensor& host) override { return host; }
  // A host copy of the parts' bytes, one after another: rows keep their file's dtype.
  [[nodiscard]] std::optional<Tensor> upload_stacked(std::span<const Tensor* const> parts) override {
    const Shape shape = stacked_shape(parts);
    for (const Tensor* p : parts) {
      if (p->dtype() != parts[0]->dtype()) return std::nullopt;
    }
    Tensor stacked = Tensor::host(parts[0]->dtype(), shape);
    auto* to = static_cast<uint8_t*>(stacked.raw());
    for (const Tensor* p : parts) {
      std::memcpy(to, p->raw(), p->nbytes());
      to += p->nbytes();
    }
    return stacked;
  }
  void download(const Tensor& src, float* dst) override {
    require_f32(src, "download", "the tensor");
    std::memcpy(dst, src.raw(), src.nbytes());
  }
  void copy_from_host(const float* src, Tensor& dst) override {
    require_f32(dst, "copy_from_host", "the tensor");
    std::memcpy(dst.raw(), src, dst.nbytes());
  }

  void embedding(const Tensor& table, const int32_t* ids, int n, Tensor& out) override {
    const int64_t dim = embedding_dim(table, ids, n, out);
    if (table.dtype() == DType::I32) fail("embedding: I32 tables are not supported");
    require_whole_blocks(table, "embedding");
    const size_t row_bytes = table.row_bytes();
    const auto* base = static_cast<const uint8_t*>(table.raw());
    float* dst = out.data<float>();
    pool_.parallel_for(n, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const uint8_t* row = base + static_cast<size_t>(ids[i]) * row_bytes;
        if (table.dtype() == DType::F32) {
          std::memcpy(dst + i * dim, row, row_bytes);
        } else {
          kernels_.dequant_row(table.dtype(), row, dst + i * dim, dim);
        }
      }
    });
  }

  void rms_norm(const Tensor& x, const Tensor& weight, float eps, Tensor& out) override {
    const int64_t rows = rows_of(x, weight, "rms_norm", "weight");
    require_f32(out, "rms_norm", "out");
    require_same(x, out, "rms_norm");
    cpu::rms_norm(pool_, x.data<float>(), weight.data<float>(), rows, weight.numel(), eps, out.data<float>());
  }

  void matmul(const Tensor& x, const Tensor& w, Tensor& out) override {
    const auto [n, k, m] = matmul_shape(x, w, out);
    if (w.dtype() == DType::I32) fail("matmul: I32 weights are not supported");
    require_whole_blocks(w, "matmul");
    cpu::matmul(pool_, kernels_, x.data<float>(), n, k, w.raw(), w.dtype(), m, out.data<float>());
  }

  void add_bias(Tensor& x, const Tensor& bias) override {
    const int64_t rows = rows_of(x, bias, "add_bias", "bias");
    cpu::add_bias(pool_, x.data<float>(), bias.data<float>(), rows, bias.numel());
  }

  void add(Tensor& x, const Tensor& y) override {
    require_f32(x, "add", "x");
    require_f32(y, "add", "y");
    require_same(x, y, "add");
    cpu::add(pool_, x.data<float>(), y.data<float>(), x.numel());
  }

  void scale(Tensor& x, float s) override {
    require_f32(x, "scale", "x");
    cpu::scale(pool_, x.data<float>(), s, x.numel());
  }

  void softcap(Tensor& x, float cap) override {
    require_f32(x, "softcap", "x");
    if (!(cap > 0)) fail("softcap: cap must be positive");
    cpu::softcap(pool_, x.data<float>(), cap, x.numel());
  }

  void silu_mul(const Tensor& gate, const Tensor& up, Tensor& out) override {
    check_gated(gate, up, out, "silu_mul");
    cpu::silu_mul(pool_, gate.data<float>(), up.data<float>(), gate.numel(), out.data<float>());
  }

  void gelu_mul(const Tensor& gate, const Tensor& up, Tensor& out) override {
    check_gated(gate, up, out, "gelu_mul");
    cpu::gelu_mul(pool_, gate.data<float>(), up.data<float>(), gate.numel(), out.data<float>());
  }

  void silu_mul_stacked(const Tensor& gate_up, Tensor& out) override {
    const int64_t d = gated_stacked_width(gate_up, out, "silu_mul_stacked");
    cpu::silu_mul_stacked(pool_, gate_up.data<float>(), out.dim(0), d, out.data<float>());
  }

  void gelu_mul_stacked(const Tensor& gate_up, Tensor& out) override {
    const int64_t d = gated_stacked_width(gate_up, out, "gelu_mul_stacked");
    cpu::gelu_mul_stacked(pool_, gate_up.data<float>(), out.dim(0), d, out.data<float>());
  }

  void split_columns(const Tensor& x, std::span<Tensor* const> parts) override {
    check_split_columns(x, parts);
    const int64_t rows = x.dim(0), cols = x.dim(1);
    const float* src = x.data<float>();
    pool_.parallel_for(rows, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        int64_t col = 0;
        for (Tensor* p : parts) {
          const int64_t width = p->dim(1);
          std::memcpy(p->data<float>() + r * width, src + r * cols + col, static_cast<size_t>(width) * sizeof(float));
          col += width;
        }
      }
    });
  }

  void rope(Tensor& x, const int32_t* positions, const RopeConfig& config) override {
    check_rope(x, config);
    cpu::rope(pool_, x.data<float>(), x.dim(0), x.dim(1), x.dim(2), positions, config);
  }

  void write_kv(const Tensor& k, const Tensor& v, Tensor& k_cache, Tensor& v_cache,
                const AttentionMetadata& meta) override {
    const CacheDims dims = cache_dims(k_cache, v_cache, "write_kv");
    check_write_kv(k, v, meta, dims);
    const CacheLayout layout{dims.num_blocks, dims.block_size, dims.kv_heads, dims.head_dim};
    cpu::write_kv(k.data<float>(), v.data<float>(), k_cache.data<float>(), v_cache.data<float>(), layout, meta);
  }

  void paged_attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                       const AttentionMetadata& meta, float scale, int sliding_window, float softcap,
                       Tensor& out) override {
    const CacheDims dims = cache_dims(k_cache, v_cache, "paged_attention");
    const int64_t num_heads = attention_heads(q, out, meta, dims);
    const CacheLayout layout{dims.num_blocks, dims.block_size, dims.kv_heads, dims.head_dim};
    cpu::paged_attention(pool_, q.data<float>(), k_cache.data<float>(), v_cache.data<float>(), layout,
                         num_heads, meta, scale, sliding_window, softcap, out.data<float>());
  }

 private:
  ThreadPool pool_;
  const VecDotKernels& kernels_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend_for_isa(int num_threads, const char* isa) {
  return std::make_unique<CpuBackend>(num_threads, kernels_for_isa(isa));
}

}  // namespace cpu

std::unique_ptr<Backend> make_cpu_backend(int num_threads) {
  return std::make_unique<cpu::CpuBackend>(num_threads, cpu::default_kernels());
}

}  // namespace pagoda
