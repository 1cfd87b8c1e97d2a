#include "runner/decode_graphs.h"

#include <algorithm>
#include <numeric>

#include "core/error.h"

namespace pagoda {

// One batch size's recording and the host arrays its replays read. Their addresses are
// what the backend recorded: they are filled in place, never resized.
struct DecodeGraphs::Graph {
  int size = 0;
  std::vector<int32_t> ids, positions, query_start_loc, seq_lens, block_tables, logit_rows;
  std::vector<int64_t> slot_mapping;
  int handle = -1;
  Tensor logits;  // [size, vocab], at the address every replay writes

  ForwardBatch batch(int max_blocks_per_seq) const {
    AttentionMetadata meta;
    meta.num_tokens = size;
    meta.num_seqs = size;
    meta.query_start_loc = query_start_loc.data();
    meta.seq_lens = seq_lens.data();
    meta.block_tables = block_tables.data();
    meta.max_blocks_per_seq = max_blocks_per_seq;
    meta.slot_mapping = slot_mapping.data();
    return {ids, positions, meta, logit_rows};
  }
};

std::vector<int> DecodeGraphs::ladder(int max_num_seqs) {
  std::vector<int> sizes;
  for (int s = 1; s <= max_num_seqs;) {
    sizes.push_back(s);
    s = s < 8 ? s * 2 : s + std::max(8, s / 4 / 8 * 8);
  }
  if (max_num_seqs > 0 && sizes.back() != max_num_seqs) sizes.push_back(max_num_seqs);
  return sizes;
}

DecodeGraphs::DecodeGraphs(Model& model, Backend& backend, KvCache& cache, const DecodeGraphOptions& options)
    : model_(model),
      backend_(backend),
      cache_(cache),
      max_blocks_per_seq_(std::max(1, (options.max_model_len + cache.block_size() - 1) / cache.block_size())) {
  if (options.max_num_seqs < 1 || options.max_model_len < 1 || !backend.can_capture()) return;
  for (const int size : ladder(options.max_num_seqs)) {
    auto g = std::make_unique<Graph>();
    g->size = size;
    const auto n = static_cast<size_t>(size);
    g->ids.assign(n, 0);
    g->positions.assign(n, 0);
    g->query_start_loc.resize(n + 1);
    std::iota(g->query_start_loc.begin(), g->query_start_loc.end(), 0);
    g->seq_lens.assign(n, 1);
    g->block_tables.assign(n * static_cast<size_t>(max_blocks_per_seq_), 0);
    g->logit_rows.resize(n);
    std::iota(g->logit_rows.begin(), g->logit_rows.end(), 0);
    g->slot_mapping.assign(n, 0);  // the null block's first slot, at capture only
    graphs_.push_back(std::move(g));
  }
  // One eager pass at the largest size first: the backend's lazily made state (GEMM plans,
  // conversion buffers at their largest) must exist before anything is recorded.
  (void)model_.forward(graphs_.back()->batch(max_blocks_per_seq_), cache_);
  for (auto it = graphs_.rbegin(); it != graphs_.rend(); ++it) capture(**it);
}

DecodeGraphs::~DecodeGraphs() {
  for (const auto& g : graphs_) {
    if (g->handle >= 0) backend_.release_graph(g->handle);
  }
}

void DecodeGraphs::capture(Graph& g) {
  const std::vector<Backend::HostSpan> inputs = {
      {g.ids.data(), g.ids.size() * sizeof(int32_t)},
      {g.positions.data(), g.positions.size() * sizeof(int32_t)},
      {g.query_start_loc.data(), g.query_start_loc.size() * sizeof(int32_t)},
      {g.seq_lens.data(), g.seq_lens.size() * sizeof(int32_t)},
      {g.block_tables.data(), g.block_tables.size() * sizeof(int32_t),
       static_cast<size_t>(max_blocks_per_seq_) * sizeof(int32_t)},
      {g.logit_rows.data(), g.logit_rows.size() * sizeof(int32_t)},
      {g.slot_mapping.data(), g.slot_mapping.size() * sizeof(int64_t)},
  };
  backend_.begin_capture(inputs);
  try {
    g.logits = model_.forward(g.batch(max_blocks_per_seq_), cache_);
    g.handle = backend_.end_capture();
  } catch (...) {
    backend_.abort_capture();
    throw;
  }
  // From now on padding rows write nothing (the host checks ran at capture).
  std::fill(g.slot_mapping.begin(), g.slot_mapping.end(), -1);
  backend_.replay(g.handle);  // the logits' memory exists from the first launch on
}

void DecodeGraphs::fill(Graph& g, std::span<const SequenceChunk> chunks, std::span<const int32_t> ids) const {
  const int block_size = cache_.block_size();
  const auto width = static_cast<size_t>(max_blocks_per_seq_);
  // A row's table is read only up to its sequence's last block, so what an earlier replay
  // left beyond that stays: clearing a whole max_model_len-wide table every step would cost
  // more host time than the step's scheduling (8 MB at 256 rows of 128k tokens).
  for (size_t i = 0; i < static_cast<size_t>(g.size); ++i) {
    if (i >= chunks.size()) {  // padding: one token at position 0 over the null block
      g.ids[i] = 0;
      g.positions[i] = 0;
      g.seq_lens[i] = 1;
      g.slot_mapping[i] = -1;
      g.block_tables[i * width] = 0;
      continue;
    }
    const SequenceChunk& c = chunks[i];
    const int pos = c.num_computed;
    g.ids[i] = ids[i];
    g.positions[i] = pos;
    g.seq_lens[i] = pos + 1;
    g.slot_mapping[i] = int64_t{c.block_ids[static_cast<size_t>(pos / block_size)]} * block_size + pos % block_size;
    std::copy(c.block_ids.begin(), c.block_ids.end(), g.block_tables.begin() + static_cast<std::ptrdiff_t>(i * width));
  }
}

std::optional<Tensor> DecodeGraphs::run(std::span<const SequenceChunk> chunks, std::span<const int32_t> ids) {
  const auto fits = std::find_if(graphs_.begin(), graphs_.end(),
                                 [&](const auto& g) { return g->size >= static_cast<int>(chunks.size()); });
  if (fits == graphs_.end() || ids.size() != chunks.size()) return std::nullopt;
  const int vocab = model_.spec().vocab_size;
  for (size_t i = 0; i < chunks.size(); ++i) {
    const SequenceChunk& c = chunks[i];
    // The same contract PagedBatch checks, and the model's token-id check (not replayed).
    if (c.num_new != 1 || c.block_ids.size() > static_cast<size_t>(max_blocks_per_seq_) ||
        static_cast<size_t>(c.num_computed / cache_.block_size()) >= c.block_ids.size()) {
      return std::nullopt;
    }
    // A negative id is a placeholder for a token sampled ahead (Backend::sample_async).
    if ((ids[i] < 0 && !backend_.can_sample_async()) || ids[i] >= vocab) {
      fail("token id ", ids[i], " outside the vocabulary of ", vocab);
    }
  }
  Graph& g = **fits;
  fill(g, chunks, ids);
  // Of each row's block table only the widest sequence's blocks cross (a padding row reads
  // its first entry).
  size_t live_blocks = 1;
  for (const SequenceChunk& c : chunks) live_blocks = std::max(live_blocks, c.block_ids.size());
  backend_.replay(g.handle, live_blocks * sizeof(int32_t));
  return g.logits.rows(0, static_cast<int64_t>(chunks.size()));
}

std::vector<int> DecodeGraphs::sizes() const {
  std::vector<int> out;
  for (const auto& g : graphs_) out.push_back(g->size);
  return out;
}

}  // namespace pagoda
