// The Backend interface on the host: memory is plain host memory and every op is a call
// into the kernels of this folder, run on one thread pool.
#include "backend/cpu/cpu_backend.h"

#include <cstring>
#include <string>

#include "backend/cpu/attention.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/norm_act.h"
#include "backend/cpu/rope.h"
#include "backend/cpu/vec_dot.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace pagoda {

namespace cpu {
namespace {

void require_f32(const Tensor& t, const char* op, const char* what) {
  if (t.dtype() != DType::F32) fail(op, ": ", what, " must be F32, not ", dtype_name(t.dtype()));
}

// A 2-d weight's rows must be whole blocks, or rows could not be addressed.
void require_whole_blocks(const Tensor& w, const char* op) {
  const int block = dtype_info(w.dtype()).block_size;
  if (w.dim(1) % block != 0) {
    fail(op, ": rows of ", w.dim(1), " elements are not whole ", dtype_name(w.dtype()), " blocks of ", block);
  }
}

void require_same(const Tensor& a, const Tensor& b, const char* op) {
  if (a.numel() != b.numel()) {
    fail(op, ": shapes ", shape_string(a.shape()), " and ", shape_string(b.shape()), " differ in size");
  }
}

class CpuBackend final : public Backend {
 public:
  CpuBackend(int num_threads, const VecDotKernels& kernels) : pool_(num_threads), kernels_(kernels) {}

  [[nodiscard]] std::string name() const override { return std::string("cpu-") + kernels_.isa; }

  [[nodiscard]] Tensor alloc(DType dtype, Shape shape) override { return Tensor::host(dtype, std::move(shape)); }
  [[nodiscard]] Tensor upload(const Tensor& host) override { return host; }
  void download(const Tensor& src, float* dst) override {
    require_f32(src, "download", "the tensor");
    std::memcpy(dst, src.raw(), src.nbytes());
  }
  void copy_from_host(const float* src, Tensor& dst) override {
    require_f32(dst, "copy_from_host", "the tensor");
    std::memcpy(dst.raw(), src, dst.nbytes());
  }

  void embedding(const Tensor& table, const int32_t* ids, int n, Tensor& out) override {
    require_f32(out, "embedding", "out");
    if (table.ndim() != 2) fail("embedding: table must be 2-d, got ", shape_string(table.shape()));
    if (table.dtype() == DType::I32) fail("embedding: I32 tables are not supported");
    require_whole_blocks(table, "embedding");
    const int64_t vocab = table.dim(0), dim = table.dim(1);
    if (out.numel() != static_cast<int64_t>(n) * dim) {
      fail("embedding: out ", shape_string(out.shape()), " does not hold ", n, " rows of ", dim);
    }
    for (int i = 0; i < n; ++i) {
      if (ids[i] < 0 || ids[i] >= vocab) fail("embedding: token id ", ids[i], " outside vocabulary of ", vocab);
    }
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
    require_f32(x, "rms_norm", "x");
    require_f32(weight, "rms_norm", "weight");
    require_f32(out, "rms_norm", "out");
    require_same(x, out, "rms_norm");
    const int64_t dim = weight.numel();
    if (dim == 0 || x.numel() % dim != 0) {
      fail("rms_norm: x ", shape_string(x.shape()), " is not rows of weight ", shape_string(weight.shape()));
    }
    cpu::rms_norm(pool_, x.data<float>(), weight.data<float>(), x.numel() / dim, dim, eps, out.data<float>());
  }

  void matmul(const Tensor& x, const Tensor& w, Tensor& out) override {
    require_f32(x, "matmul", "x");
    require_f32(out, "matmul", "out");
    if (w.ndim() != 2) fail("matmul: weight must be 2-d, got ", shape_string(w.shape()));
    const int64_t m = w.dim(0), k = w.dim(1);
    if (k == 0 || x.numel() % k != 0) {
      fail("matmul: x ", shape_string(x.shape()), " does not match weight ", shape_string(w.shape()));
    }
    const int64_t n = x.numel() / k;
    if (out.numel() != n * m) {
      fail("matmul: out ", shape_string(out.shape()), " is not [", n, ", ", m, "]");
    }
    if (w.dtype() == DType::I32) fail("matmul: I32 weights are not supported");
    require_whole_blocks(w, "matmul");
    PAGODA_CHECK(out.raw() != x.raw());
    cpu::matmul(pool_, kernels_, x.data<float>(), n, k, w.raw(), w.dtype(), m, out.data<float>());
  }

  void add_bias(Tensor& x, const Tensor& bias) override {
    require_f32(x, "add_bias", "x");
    require_f32(bias, "add_bias", "bias");
    const int64_t dim = bias.numel();
    if (dim == 0 || x.numel() % dim != 0) {
      fail("add_bias: x ", shape_string(x.shape()), " is not rows of bias ", shape_string(bias.shape()));
    }
    cpu::add_bias(pool_, x.data<float>(), bias.data<float>(), x.numel() / dim, dim);
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

  void rope(Tensor& x, const int32_t* positions, const RopeConfig& config) override {
    require_f32(x, "rope", "x");
    if (x.ndim() != 3) fail("rope: x must be [tokens, heads, head_dim], got ", shape_string(x.shape()));
    if (config.rot_dim <= 0 || config.rot_dim % 2 != 0 || config.rot_dim > x.dim(2) || config.inv_freq == nullptr) {
      fail("rope: rot_dim ", config.rot_dim, " invalid for head_dim ", x.dim(2));
    }
    cpu::rope(pool_, x.data<float>(), x.dim(0), x.dim(1), x.dim(2), positions, config);
  }

  void write_kv(const Tensor& k, const Tensor& v, Tensor& k_cache, Tensor& v_cache,
                const AttentionMetadata& meta) override {
    const CacheLayout layout = cache_layout(k_cache, v_cache, "write_kv");
    require_f32(k, "write_kv", "k");
    require_f32(v, "write_kv", "v");
    const int64_t expected = static_cast<int64_t>(meta.num_tokens) * layout.kv_heads * layout.head_dim;
    if (k.numel() != expected || v.numel() != expected) {
      fail("write_kv: k ", shape_string(k.shape()), " / v ", shape_string(v.shape()), " are not [",
           meta.num_tokens, ", ", layout.kv_heads, ", ", layout.head_dim, "]");
    }
    cpu::write_kv(k.data<float>(), v.data<float>(), k_cache.data<float>(), v_cache.data<float>(), layout, meta);
  }

  void paged_attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                       const AttentionMetadata& meta, float scale, int sliding_window, float softcap,
                       Tensor& out) override {
    const CacheLayout layout = cache_layout(k_cache, v_cache, "paged_attention");
    require_f32(q, "paged_attention", "q");
    require_f32(out, "paged_attention", "out");
    require_same(q, out, "paged_attention");
    const int64_t per_token = static_cast<int64_t>(meta.num_tokens) * layout.head_dim;
    if (per_token == 0 || q.numel() % per_token != 0) {
      fail("paged_attention: q ", shape_string(q.shape()), " is not [", meta.num_tokens, ", heads, ",
           layout.head_dim, "]");
    }
    const int64_t num_heads = q.numel() / per_token;
    if (num_heads % layout.kv_heads != 0) {
      fail("paged_attention: ", num_heads, " query heads are not a multiple of ", layout.kv_heads, " kv heads");
    }
    cpu::paged_attention(pool_, q.data<float>(), k_cache.data<float>(), v_cache.data<float>(), layout,
                         num_heads, meta, scale, sliding_window, softcap, out.data<float>());
  }

 private:
  static void check_gated(const Tensor& gate, const Tensor& up, const Tensor& out, const char* op) {
    require_f32(gate, op, "gate");
    require_f32(up, op, "up");
    require_f32(out, op, "out");
    require_same(gate, up, op);
    require_same(gate, out, op);
  }

  static CacheLayout cache_layout(const Tensor& k_cache, const Tensor& v_cache, const char* op) {
    require_f32(k_cache, op, "k_cache");
    require_f32(v_cache, op, "v_cache");
    if (k_cache.ndim() != 4 || k_cache.shape() != v_cache.shape()) {
      fail(op, ": caches must both be [num_blocks, block_size, kv_heads, head_dim], got ",
           shape_string(k_cache.shape()), " and ", shape_string(v_cache.shape()));
    }
    return {k_cache.dim(0), k_cache.dim(1), k_cache.dim(2), k_cache.dim(3)};
  }

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
