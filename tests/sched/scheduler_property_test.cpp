// A seeded random walk over the scheduler and KV manager (add / schedule + update with
// random sampled tokens / abort, tiny pools that force preemption), checking after every
// operation the invariants that make paged KV safe. A shadow copy of what each block's KV
// slots hold (written for every scheduled token) checks that a prefix hit only ever hands
// a request KV computed from its own tokens, and that no shared block is written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <unordered_set>

#include "sched/scheduler.h"

namespace pagoda {
namespace {

struct WalkConfig {
  SchedulerConfig sched;
  bool colliding_hasher = false;
};

struct Totals {
  int64_t preemptions = 0, hits = 0, collisions = 0, resumed = 0, finished = 0;
};

// Three hash values for everything: most hash matches are collisions.
BlockHash colliding_hash(const BlockHash&, std::span<const TokenId> tokens, const ExtraKeys&) {
  BlockHash h;
  h.bytes[0] = static_cast<uint8_t>(tokens[0] % 3);
  return h;
}

class Walk {
 public:
  Walk(const WalkConfig& wc, uint32_t seed)
      : cfg_(wc.sched),
        s_(wc.sched, wc.colliding_hasher ? BlockHasher(colliding_hash) : keyed_block_hasher()),
        rng_(seed),
        kv_slots_(static_cast<size_t>(wc.sched.num_kv_blocks),
                  std::vector<TokenId>(static_cast<size_t>(wc.sched.block_size), -1)) {
    for (auto& p : prefixes_) {
      for (int i = 0; i < cfg_.max_model_len; ++i) p.push_back(static_cast<TokenId>(rng_() % 8));
    }
  }

  void run(int64_t num_ops) {
    for (int64_t op = 0; op < num_ops && !::testing::Test::HasFatalFailure(); ++op) {
      const uint32_t dice = rng_() % 100;
      if (dice < 30) {
        add();
      } else if (dice < 85) {
        step();
      } else {
        abort_some();
      }
      check_invariants();
    }
    drain();
  }

  [[nodiscard]] Totals totals() const {
    Totals t = totals_;
    const SchedulerStats st = s_.stats();
    t.preemptions = st.num_preemptions;
    t.hits = st.prefix_cache.hits;
    t.collisions = st.prefix_cache.collisions;
    return t;
  }

 private:
  int rand_in(int lo, int hi) {
    return lo + static_cast<int>(rng_() % static_cast<uint32_t>(hi - lo + 1));
  }

  void add() {
    if (s_.num_waiting_requests() + s_.num_running_requests() >= 40) return;
    RequestParams p;
    p.id = std::to_string(next_id_++);
    const int len = rng_() % 10 < 7 ? rand_in(1, std::max(1, cfg_.max_model_len / 2))
                                    : rand_in(1, cfg_.max_model_len - 1);
    const auto& prefix = prefixes_[rng_() % prefixes_.size()];
    const bool shared = rng_() % 2 == 0;
    for (int i = 0; i < len; ++i) {
      p.prompt_token_ids.push_back(shared ? prefix[static_cast<size_t>(i)]
                                          : static_cast<TokenId>(rng_() % 8));
    }
    p.max_tokens = rand_in(1, 20);
    p.priority = rand_in(0, 3);
    if (rng_() % 10 < 3) p.stop_token_ids = {static_cast<TokenId>(rng_() % 16)};
    if (rng_() % 10 == 0) p.cache_salt = "tenant";
    issued_.push_back(p.id);
    s_.add_request(std::move(p));
  }

  // The runner's part: check what each scheduled request reads, then "write" its new KV.
  void execute(const SchedulerOutput& out) {
    auto check_hit = [&](const RequestId& id, const std::vector<BlockId>& blocks, int n) {
      const std::vector<TokenId>& tokens = s_.find_request(id)->all_token_ids();
      for (int p = 0; p < n; ++p) {
        const BlockId b = blocks[static_cast<size_t>(p / cfg_.block_size)];
        ASSERT_EQ(kv_slots_[static_cast<size_t>(b)][static_cast<size_t>(p % cfg_.block_size)],
                  tokens[static_cast<size_t>(p)])
            << "request " << id << " would read foreign KV at position " << p;
      }
    };
    std::unordered_map<RequestId, int> computed_before;
    for (const NewRequestData& n : out.scheduled_new_reqs) {
      check_hit(n.id, n.block_ids, n.num_computed_tokens);
      computed_before[n.id] = n.num_computed_tokens;
    }
    for (const CachedRequestData& c : out.scheduled_cached_reqs) {
      if (c.resumed_from_preemption) {
        ++totals_.resumed;
        ASSERT_EQ(c.new_token_ids, s_.find_request(c.id)->all_token_ids());
        check_hit(c.id, c.new_block_ids, c.num_computed_tokens);
      }
      computed_before[c.id] = c.num_computed_tokens;
    }
    ASSERT_EQ(computed_before.size(), out.num_scheduled_tokens.size());
    for (const auto& [id, n] : out.num_scheduled_tokens) {
      const Request* r = s_.find_request(id);
      const std::vector<BlockId> blocks = s_.kv().block_ids(id);
      const int start = computed_before.at(id);
      ASSERT_EQ(start + n, r->num_computed_tokens);
      for (int p = start; p < start + n; ++p) {
        const BlockId b = blocks.at(static_cast<size_t>(p / cfg_.block_size));
        ASSERT_EQ(s_.kv().pool().block(b).ref_cnt, 1) << "write into a shared block";
        kv_slots_[static_cast<size_t>(b)][static_cast<size_t>(p % cfg_.block_size)] =
            r->all_token_ids()[static_cast<size_t>(p)];
      }
    }
  }

  void step() {
    const SchedulerOutput out = s_.schedule();
    check_output(out);
    execute(out);
    SampledTokens sampled;
    for (const auto& [id, n] : out.num_scheduled_tokens) {
      const Request* r = s_.find_request(id);
      if (r->num_computed_tokens == r->num_tokens())
        sampled[id] = {static_cast<TokenId>(rng_() % 16)};
    }
    // Sometimes the caller aborts between schedule and update.
    if (rng_() % 20 == 0) abort_some();
    totals_.finished += static_cast<int64_t>(s_.update_from_output(out, sampled).size());
  }

  void abort_some() {
    if (issued_.empty()) return;
    std::vector<RequestId> ids;
    for (int i = rand_in(1, 3); i > 0; --i) ids.push_back(issued_[rng_() % issued_.size()]);
    s_.finish_requests(ids, RequestStatus::FinishedAborted);  // finished ones are ignored
  }

  void check_output(const SchedulerOutput& out) {
    int total = 0;
    for (const auto& [id, n] : out.num_scheduled_tokens) {
      ASSERT_GT(n, 0);
      if (cfg_.long_prefill_token_threshold > 0) {
        ASSERT_LE(n, cfg_.long_prefill_token_threshold);
      }
      total += n;
    }
    ASSERT_EQ(total, out.total_num_scheduled_tokens);
    ASSERT_LE(total, cfg_.max_num_batched_tokens);
    ASSERT_EQ(out.scheduled_new_reqs.size() + out.scheduled_cached_reqs.size(),
              out.num_scheduled_tokens.size());
    for (const RequestId& id : out.preempted_req_ids) {
      ASSERT_EQ(out.num_scheduled_tokens.count(id), 0u);
    }
  }

  void check_invariants() {
    const KVCacheManager& kv = s_.kv();
    const BlockPool& pool = kv.pool();
    ASSERT_LE(s_.num_running_requests(), cfg_.max_num_seqs);
    std::vector<int> holders(static_cast<size_t>(pool.num_blocks()), 0);
    for (const Request* r : s_.running()) {
      ASSERT_EQ(r->status, RequestStatus::Running);
      ASSERT_LE(r->num_computed_tokens, r->num_tokens());
      ASSERT_LE(r->num_tokens(), cfg_.max_model_len);
      const std::vector<BlockId> blocks = kv.block_ids(r->id());
      const int slots = static_cast<int>(blocks.size()) * cfg_.block_size;
      ASSERT_GE(slots, r->num_computed_tokens);
      ASSERT_LT(slots, r->num_computed_tokens + cfg_.block_size);  // no block beyond need
      std::unordered_set<BlockId> own;
      for (const BlockId b : blocks) {
        ASSERT_NE(b, kNullBlockId);
        ASSERT_TRUE(own.insert(b).second) << "block twice in one table";
        ++holders[static_cast<size_t>(b)];
      }
    }
    for (const Request* r : s_.waiting()) {
      ASSERT_TRUE(r->status == RequestStatus::Waiting || r->status == RequestStatus::Preempted);
      ASSERT_EQ(r->num_computed_tokens, 0);
      ASSERT_TRUE(kv.block_ids(r->id()).empty());
    }
    ASSERT_EQ(kv.num_tracked_requests(), s_.running().size());
    ASSERT_FALSE(pool.block(kNullBlockId).in_free_queue);
    ASSERT_EQ(pool.block(kNullBlockId).ref_cnt, 0);
    int num_free = 0;
    for (BlockId b = 1; b < pool.num_blocks(); ++b) {
      const KVBlock& blk = pool.block(b);
      ASSERT_EQ(blk.ref_cnt, holders[static_cast<size_t>(b)]) << "block " << b;
      ASSERT_NE(blk.in_free_queue, blk.ref_cnt > 0) << "block " << b << " free and held";
      num_free += blk.in_free_queue;
    }
    ASSERT_EQ(num_free, pool.num_free_blocks());
    if (rng_() % 64 == 0) {  // the list itself, now and then (it is O(blocks))
      const std::vector<BlockId> q = pool.free_queue();
      ASSERT_EQ(static_cast<int>(q.size()), num_free);
      for (const BlockId b : q) ASSERT_TRUE(pool.block(b).in_free_queue);
    }
  }

  void drain() {
    for (int i = 0;
         i < 10000 && s_.has_unfinished_requests() && !::testing::Test::HasFatalFailure(); ++i) {
      step();
      check_invariants();
    }
    ASSERT_FALSE(s_.has_unfinished_requests()) << "requests never finished";
    const BlockPool& pool = s_.kv().pool();
    ASSERT_EQ(pool.num_free_blocks(), pool.num_usable_blocks()) << "blocks leaked";
    ASSERT_EQ(s_.kv().num_tracked_requests(), 0u);
    ASSERT_EQ(s_.stats().kv_cache_usage, 0.0);
    ASSERT_TRUE(s_.reset_prefix_cache());
    ASSERT_EQ(pool.num_cached_blocks(), 0);
  }

  SchedulerConfig cfg_;
  Scheduler s_;
  std::mt19937 rng_;
  std::vector<std::vector<TokenId>> kv_slots_;  // [block][slot]: token whose KV is there
  std::vector<std::vector<TokenId>> prefixes_ = std::vector<std::vector<TokenId>>(3);
  std::vector<RequestId> issued_;
  uint64_t next_id_ = 0;
  Totals totals_;
};

SchedulerConfig config(int block_size, int num_kv_blocks, int max_model_len, int budget,
                       int max_num_seqs, int threshold, bool caching, SchedulingPolicy policy) {
  SchedulerConfig c;
  c.block_size = block_size;
  c.num_kv_blocks = num_kv_blocks;
  c.max_model_len = max_model_len;
  c.max_num_batched_tokens = budget;
  c.max_num_seqs = max_num_seqs;
  c.long_prefill_token_threshold = threshold;
  c.enable_prefix_caching = caching;
  c.policy = policy;
  return c;
}

TEST(SchedulerProperty, RandomWalkKeepsInvariants) {
  const bool slow_skipped = std::getenv("PAGODA_SKIP_SLOW") != nullptr;
  const int64_t total_ops = slow_skipped ? 100'000 : 1'000'000;
  using P = SchedulingPolicy;
  const std::vector<WalkConfig> walks = {
      {config(4, 9, 32, 16, 8, 0, true, P::Fcfs)},
      {config(4, 9, 32, 16, 8, 5, true, P::Priority)},
      {config(2, 17, 32, 64, 4, 0, false, P::Fcfs)},
      {config(8, 12, 64, 24, 16, 8, true, P::Priority)},
      {config(4, 33, 64, 128, 32, 0, true, P::Fcfs), /*colliding_hasher=*/true},
      {config(1, 17, 16, 8, 3, 3, true, P::Priority), /*colliding_hasher=*/true},
      {config(16, 9, 128, 32, 8, 0, true, P::Fcfs)},
      {config(4, 65, 48, 256, 64, 0, true, P::Fcfs)},
  };
  Totals sum;
  for (size_t i = 0; i < walks.size(); ++i) {
    SCOPED_TRACE("walk " + std::to_string(i));
    Walk w(walks[i], static_cast<uint32_t>(1234 + i));
    w.run(total_ops / static_cast<int64_t>(walks.size()));
    if (HasFatalFailure()) return;
    const Totals t = w.totals();
    if (walks[i].colliding_hasher) {
      EXPECT_GT(t.collisions, 0);
    }
    sum.preemptions += t.preemptions;
    sum.hits += t.hits;
    sum.resumed += t.resumed;
    sum.finished += t.finished;
  }
  // The walk must actually reach the paths it is meant to test.
  EXPECT_GT(sum.preemptions, 100);
  EXPECT_GT(sum.resumed, 100);
  EXPECT_GT(sum.hits, 1000);
  EXPECT_GT(sum.finished, 1000);
  std::printf("walk: %lld preemptions, %lld resumed, %lld hit tokens, %lld finished\n",
              static_cast<long long>(sum.preemptions), static_cast<long long>(sum.resumed),
              static_cast<long long>(sum.hits), static_cast<long long>(sum.finished));
}

}  // namespace
}  // namespace pagoda
