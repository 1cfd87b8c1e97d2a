// OutputStream without a model: per-choice merging, the end after every choice finished,
// the listener for asynchronous readers, and failures.
#include "engine/output_stream.h"

#include <gtest/gtest.h>

#include <atomic>

#include "core/error.h"

namespace pagoda {
namespace {

RequestOutput delta(int index, std::string text, bool finished = false) {
  RequestOutput d;
  d.id = RequestId(1, 'r');  // not = "r": GCC 12 -O3 reports a false -Wrestrict inside std::string
  d.index = index;
  d.text = std::move(text);
  d.finished = finished;
  if (finished) d.finish_reason = FinishReason::Length;
  return d;
}

TEST(OutputStream, MergesPerChoiceAndEndsAfterEveryChoiceFinished) {
  OutputStream s(2);
  s.push(delta(0, "a"));
  s.push(delta(1, "x"));
  s.push(delta(0, "b", true));
  auto first = s.try_next();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->index, 0);
  EXPECT_EQ(first->text, "ab");
  EXPECT_TRUE(first->finished);
  auto second = s.try_next();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->index, 1);
  EXPECT_EQ(second->text, "x");
  EXPECT_FALSE(s.try_next());
  s.push(delta(1, "y", true));
  auto last = s.next();  // would block if choice 1's end had been lost
  ASSERT_TRUE(last);
  EXPECT_EQ(last->text, "y");
  EXPECT_FALSE(s.next());  // ended
  s.push(delta(0, "late"));
  EXPECT_FALSE(s.try_next());  // pushes after the end are dropped
}

TEST(OutputStream, ListenerRunsOnEveryPushAndAtOnceWhenSomethingIsPending) {
  OutputStream s;
  s.push(delta(0, "a"));
  std::atomic<int> calls = 0;
  s.set_listener([&] { ++calls; });
  EXPECT_EQ(calls, 1);  // something was already pending
  s.push(delta(0, "b"));
  EXPECT_EQ(calls, 2);
  s.push(delta(0, "c", true));
  EXPECT_EQ(calls, 3);
  s.fail_with("too late");  // the stream has ended: nothing changes, nobody is called
  EXPECT_EQ(calls, 3);
  auto d = s.try_next();
  ASSERT_TRUE(d);
  EXPECT_EQ(d->text, "abc");
  EXPECT_FALSE(s.try_next());
}

TEST(OutputStream, FailureReachesTheReaderAfterPendingOutput) {
  OutputStream s;
  std::atomic<int> calls = 0;
  s.set_listener([&] { ++calls; });
  EXPECT_EQ(calls, 0);
  s.push(delta(0, "a"));
  s.fail_with("engine failed: boom");
  EXPECT_EQ(calls, 2);
  auto d = s.try_next();
  ASSERT_TRUE(d);
  EXPECT_EQ(d->text, "a");
  EXPECT_THROW((void)s.try_next(), Error);
}

}  // namespace
}  // namespace pagoda
