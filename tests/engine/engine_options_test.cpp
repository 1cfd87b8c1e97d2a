// EngineOptions -> SchedulerConfig: KV bytes become whole blocks (plus the null block),
// max_model_len defaults to the model's context within what the cache holds, and bad
// options are errors that name the option.
#include <gtest/gtest.h>

#include "core/error.h"
#include "engine/engine_options.h"

namespace pagoda {
namespace {

ModelSpec tiny_spec() {
  ModelSpec s;
  s.num_layers = 2;
  s.num_kv_heads = 2;
  s.head_dim = 8;  // 2 * 4 bytes * 2 * 2 * 8 = 256 bytes per token
  s.max_position_embeddings = 1024;
  return s;
}

TEST(EngineOptions, KvBytesToBlocks) {
  EngineOptions o;
  o.block_size = 16;                      // 4096 bytes per block
  o.kv_cache_memory = 4096 * 100 + 4000;  // a partial block is not a block
  const SchedulerConfig c = make_scheduler_config(o, tiny_spec());
  EXPECT_EQ(c.num_kv_blocks, 101);
  EXPECT_EQ(c.max_model_len, 1024);
  EXPECT_EQ(c.block_size, 16);
  EXPECT_EQ(c.max_num_seqs, o.max_num_seqs);
  EXPECT_EQ(c.max_num_batched_tokens, o.max_num_batched_tokens);
}

TEST(EngineOptions, DefaultLengthFitsTheCache) {
  EngineOptions o;
  o.kv_cache_memory = 4096 * 10;  // 160 tokens
  EXPECT_EQ(make_scheduler_config(o, tiny_spec()).max_model_len, 160);
  o.max_model_len = 100;
  EXPECT_EQ(make_scheduler_config(o, tiny_spec()).max_model_len, 100);
}

TEST(EngineOptions, RejectsBadValues) {
  const auto bad = [](auto edit) {
    EngineOptions o;
    edit(o);
    EXPECT_THROW((void)make_scheduler_config(o, tiny_spec()), Error);
  };
  bad([](EngineOptions& o) { o.max_num_seqs = 0; });
  bad([](EngineOptions& o) { o.max_num_batched_tokens = -1; });
  bad([](EngineOptions& o) { o.block_size = 0; });
  bad([](EngineOptions& o) { o.kv_cache_memory = 100; });  // less than one block
  bad([](EngineOptions& o) { o.max_model_len = 2048; });   // beyond the model's context
  bad([](EngineOptions& o) { o.max_model_len = -5; });
  bad([](EngineOptions& o) { o.long_prefill_token_threshold = -1; });
}

}  // namespace
}  // namespace pagoda
