// Named weight tensors of a model, under GGUF's canonical names whatever the source
// (the Hugging Face loader renames). Shapes are row-major, outermost first:
//
//   token_embd.weight            [vocab, hidden]
//   output_norm.weight           [hidden]                     F32
//   output.weight                [vocab, hidden]              absent when tied
//   blk.N.attn_norm.weight       [hidden]                     F32
//   blk.N.attn_q.weight          [heads * head_dim, hidden]
//   blk.N.attn_k.weight          [kv_heads * head_dim, hidden]
//   blk.N.attn_v.weight          [kv_heads * head_dim, hidden]
//   blk.N.attn_{q,k,v}.bias      [rows of the weight]         F32, Qwen2
//   blk.N.attn_{q,k}_norm.weight [head_dim]                   F32, Qwen3 / Gemma 3
//   blk.N.attn_output.weight     [hidden, heads * head_dim]
//   blk.N.post_attention_norm.weight [hidden]                 F32, Gemma 3
//   blk.N.ffn_norm.weight        [hidden]                     F32
//   blk.N.ffn_gate.weight        [intermediate, hidden]
//   blk.N.ffn_up.weight          [intermediate, hidden]
//   blk.N.ffn_down.weight        [hidden, intermediate]
//   blk.N.post_ffw_norm.weight   [hidden]                     F32, Gemma 3
//
// Norm weights multiply the normalized value directly: Gemma's HF checkpoints store
// w - 1 and the loader adds the 1 back (as GGUF's converter does).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/mapped_file.h"
#include "core/tensor.h"

namespace pagoda {

class WeightMap {
 public:
  // Throws Error on a duplicate name.
  void add(const std::string& name, Tensor tensor);
  // Throws Error naming the missing tensor.
  [[nodiscard]] const Tensor& get(const std::string& name) const;
  [[nodiscard]] const Tensor* find(const std::string& name) const;
  [[nodiscard]] const std::map<std::string, Tensor>& all() const { return tensors_; }
  // Keeps the owner of the tensors' memory (an mmap, converted copies) alive.
  void keep_alive(std::shared_ptr<void> owner) { owners_.push_back(std::move(owner)); }
  // Notes a file map that tensors view (a kept-alive owner must own it), for release_pages.
  void add_mapping(const MappedFile* file) { mappings_.push_back(file); }
  // Drops the process's resident pages behind t when t views one of the maps; does nothing
  // for other memory (converted copies). For a backend that has copied t to device memory:
  // t stays readable, the file is read again if it is touched.
  void release_pages(const Tensor& t) const;

 private:
  std::map<std::string, Tensor> tensors_;
  std::vector<std::shared_ptr<void>> owners_;
  std::vector<const MappedFile*> mappings_;
};

}  // namespace pagoda
