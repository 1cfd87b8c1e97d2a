// Incremental detokenization token by token: no delta carries a half-decoded UTF-8
// sequence, the deltas add up to the full decode, and stop strings cut exactly there.
#include "engine/output_processor.h"
#include "engine_test_util.h"

namespace pagoda::testing {
namespace {

std::vector<std::string> feed_one_by_one(OutputProcessor& proc, const std::vector<int32_t>& ids,
                                         std::optional<FinishReason>* reason) {
  std::vector<std::string> deltas;
  for (size_t i = 0; i < ids.size(); ++i) {
    const bool last = i + 1 == ids.size();
    const RequestOutput d = proc.process("r", {&ids[i], 1}, {},
                                         last ? std::optional(RequestStatus::FinishedLengthCapped) : std::nullopt);
    deltas.push_back(d.text);
    if (d.finished) {
      *reason = d.finish_reason;
      break;
    }
  }
  return deltas;
}

TEST(OutputProcessor, MultiByteCharactersAreNeverSplit) {
  PAGODA_NEED_SMOLLM2(b);
  const std::string text = "h\xC3\xA9llo \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E \xF0\x9F\x8E\x89\xF0\x9F\x8D\xA3 done";
  const std::vector<int32_t> ids = b->tokenizer().encode(text, false);
  ASSERT_GT(ids.size(), 8u);
  OutputProcessor proc(b->tokenizer());
  proc.add_request("r", SamplingParams{});
  std::optional<FinishReason> reason;
  std::string joined;
  for (const std::string& d : feed_one_by_one(proc, ids, &reason)) {
    EXPECT_EQ(d.find("\xEF\xBF\xBD"), std::string::npos) << "delta with U+FFFD: " << d;
    joined += d;
  }
  EXPECT_EQ(joined, b->tokenizer().decode(ids));
  EXPECT_EQ(joined, text);
  EXPECT_EQ(reason, FinishReason::Length);
  EXPECT_EQ(proc.num_requests(), 0);
}

TEST(OutputProcessor, StopStringAcrossTokens) {
  PAGODA_NEED_SMOLLM2(b);
  const std::string text = "one two three four five six";
  const std::vector<int32_t> ids = b->tokenizer().encode(text, false);
  for (const bool include : {false, true}) {
    OutputProcessor proc(b->tokenizer());
    SamplingParams p;
    p.stop = {"ee fo"};
    p.include_stop_str_in_output = include;
    proc.add_request("r", p);
    std::optional<FinishReason> reason;
    std::string joined;
    for (const std::string& d : feed_one_by_one(proc, ids, &reason)) joined += d;
    EXPECT_EQ(joined, include ? "one two three fo" : "one two thr");
    EXPECT_EQ(reason, FinishReason::Stop);
  }
}

}  // namespace
}  // namespace pagoda::testing
