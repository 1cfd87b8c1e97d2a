#include "sample/stop_checker.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/error.h"

namespace pagoda {
namespace {

struct Outcome {
  std::string emitted;  // everything streamed out, in order
  bool stopped = false;
  int stop_index = -1;
};

// Feeds the deltas the way the output processor will: after each one, emit the newly
// allowed text; at the end (no stop) flush the held-back rest.
Outcome run(const std::vector<std::string>& stops, bool include,
            const std::vector<std::string>& deltas) {
  StopChecker checker(stops, include);
  std::string text;
  Outcome out;
  size_t emitted = 0;
  for (const std::string& delta : deltas) {
    text += delta;
    const StopChecker::Update update = checker.append(delta);
    EXPECT_GE(update.emit_end, emitted) << "emit_end went backwards";
    EXPECT_LE(update.emit_end, text.size());
    out.emitted += text.substr(emitted, update.emit_end - emitted);
    emitted = update.emit_end;
    if (update.stopped) {
      out.stopped = true;
      out.stop_index = update.stop_index;
      return out;
    }
  }
  out.emitted += text.substr(emitted, checker.finish_emit_end() - emitted);
  return out;
}

// The obviously-correct reference: scan ends left to right; at the first end where some
// stop string ends, take the longest such one.
Outcome reference(const std::vector<std::string>& stops, bool include, const std::string& text) {
  for (size_t end = 1; end <= text.size(); ++end) {
    int best = -1;
    for (size_t i = 0; i < stops.size(); ++i) {
      const std::string& s = stops[i];
      if (s.size() > end || text.compare(end - s.size(), s.size(), s) != 0) continue;
      if (best < 0 || s.size() > stops[best].size()) best = static_cast<int>(i);
    }
    if (best >= 0) {
      const size_t cut = include ? end : end - stops[best].size();
      return {text.substr(0, cut), true, best};
    }
  }
  return {text, false, -1};
}

TEST(StopChecker, StopInsideOneDelta) {
  const Outcome out = run({"STOP"}, false, {"Hello ", "wor", "ldSTOPmore"});
  EXPECT_TRUE(out.stopped);
  EXPECT_EQ(out.emitted, "Hello world");
  EXPECT_EQ(out.stop_index, 0);
}

TEST(StopChecker, StopAcrossTokenBoundaries) {
  const Outcome out = run({"</end>"}, false, {"abc<", "/e", "n", "d>tail"});
  EXPECT_TRUE(out.stopped);
  EXPECT_EQ(out.emitted, "abc");
}

TEST(StopChecker, HoldsBackOnlyWhatCouldStillBecomeAStop) {
  StopChecker checker(std::vector<std::string>{"</end>"}, false);
  EXPECT_EQ(checker.append("abc</e").emit_end, 3u);  // "</e" might become "</end>"
  EXPECT_EQ(checker.append("x").emit_end, 7u);       // "</ex" cannot: all of it goes out
  EXPECT_EQ(checker.append("<").emit_end, 7u);
  EXPECT_FALSE(checker.append("/").stopped);
  EXPECT_EQ(checker.finish_emit_end(), 9u);  // end of generation flushes the hold-back
}

TEST(StopChecker, StopAtTheVeryStart) {
  Outcome out = run({"###"}, false, {"###", "after"});
  EXPECT_TRUE(out.stopped);
  EXPECT_EQ(out.emitted, "");
  out = run({"###"}, true, {"#", "##x"});
  EXPECT_TRUE(out.stopped);
  EXPECT_EQ(out.emitted, "###");
}

TEST(StopChecker, IncludeStopStringInOutput) {
  const Outcome out = run({"\n\n"}, true, {"para one\n", "\nnext"});
  EXPECT_TRUE(out.stopped);
  EXPECT_EQ(out.emitted, "para one\n\n");
  // Nothing is held back when the stop string would be emitted anyway.
  StopChecker checker(std::vector<std::string>{"\n\n"}, true);
  EXPECT_EQ(checker.append("a\n").emit_end, 2u);
}

TEST(StopChecker, EarliestEndingStopWinsOverEarlierStartingOne) {
  // "b" ends before "abc" does, so streamed byte by byte "b" stops first; a single delta
  // must give the same answer.
  const std::vector<std::string> stops = {"abc", "b"};
  const Outcome whole = run(stops, false, {"xabcy"});
  const Outcome bytes = run(stops, false, {"x", "a", "b", "c", "y"});
  EXPECT_EQ(whole.emitted, "xa");
  EXPECT_EQ(whole.stop_index, 1);
  EXPECT_EQ(bytes.emitted, whole.emitted);
  EXPECT_EQ(bytes.stop_index, whole.stop_index);
}

TEST(StopChecker, OverlappingStopsEndingTogetherTakeTheLongest) {
  const Outcome out = run({"bc", "abc"}, false, {"zab", "cd"});
  EXPECT_TRUE(out.stopped);
  EXPECT_EQ(out.stop_index, 1);
  EXPECT_EQ(out.emitted, "z");
  const Outcome incl = run({"bc", "abc"}, true, {"zab", "cd"});
  EXPECT_EQ(incl.emitted, "zabc");
}

TEST(StopChecker, SelfOverlappingStop) {
  // "aab" inside "aaab": the automaton must fall back, not restart, after the third 'a'.
  const Outcome out = run({"aab"}, false, {"aa", "a", "b!"});
  EXPECT_TRUE(out.stopped);
  EXPECT_EQ(out.emitted, "a");
}

TEST(StopChecker, NoStopEmitsEverythingAtTheEnd) {
  const Outcome out = run({"zz", "qq"}, false, {"hello z", "q", "z"});
  EXPECT_FALSE(out.stopped);
  EXPECT_EQ(out.emitted, "hello zqz");
  const Outcome none = run({}, false, {"a", "b"});
  EXPECT_EQ(none.emitted, "ab");
}

TEST(StopChecker, MultibyteUtf8Stop) {
  const Outcome out = run({"\xe3\x80\x82"}, false, {"\xe4\xbd\xa0\xe5\xa5\xbd\xe3", "\x80\x82x"});
  EXPECT_TRUE(out.stopped);
  EXPECT_EQ(out.emitted, "\xe4\xbd\xa0\xe5\xa5\xbd");
}

TEST(StopChecker, AppendAfterStopChangesNothing) {
  StopChecker checker(std::vector<std::string>{"x"}, false);
  const StopChecker::Update first = checker.append("abxcd");
  const StopChecker::Update again = checker.append("more x");
  EXPECT_TRUE(again.stopped);
  EXPECT_EQ(again.emit_end, first.emit_end);
  EXPECT_EQ(checker.finish_emit_end(), 2u);
}

TEST(StopChecker, EmptyStopStringIsAnError) {
  EXPECT_THROW(StopChecker(std::vector<std::string>{"ok", ""}, false), Error);
}

TEST(StopChecker, RandomTextsAndSplitsMatchReference) {
  std::mt19937 gen(1234);
  auto random_string = [&](size_t min_len, size_t max_len) {
    std::string s(std::uniform_int_distribution<size_t>(min_len, max_len)(gen), 'a');
    for (char& c : s) c = static_cast<char>('a' + std::uniform_int_distribution<int>(0, 2)(gen));
    return s;
  };
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<std::string> stops;
    const int num_stops = std::uniform_int_distribution<int>(0, 4)(gen);
    for (int i = 0; i < num_stops; ++i) stops.push_back(random_string(1, 4));
    const bool include = trial % 2 == 1;
    const std::string text = random_string(0, 24);
    std::vector<std::string> deltas;
    for (size_t pos = 0; pos < text.size();) {
      const size_t len = std::uniform_int_distribution<size_t>(0, 5)(gen);  // empty deltas too
      deltas.push_back(text.substr(pos, len));
      pos += len;
    }
    const Outcome got = run(stops, include, deltas);
    const Outcome want = reference(stops, include, text);
    ASSERT_EQ(got.stopped, want.stopped) << text;
    ASSERT_EQ(got.emitted, want.emitted) << text << " include=" << include;
    ASSERT_EQ(got.stop_index, want.stop_index) << text;
  }
}

TEST(StopChecker, NeverEmitsAPrefixOfAStopItLaterCompletes) {
  // The hold-back is exactly right: at every step the emitted text is the longest prefix
  // that no continuation could turn into "text past a stop".
  std::mt19937 gen(99);
  const std::vector<std::string> stops = {"abab", "ba", "ccc"};
  for (int trial = 0; trial < 2000; ++trial) {
    StopChecker checker(stops, false);
    std::string text;
    for (int step = 0; step < 12; ++step) {
      const char c = static_cast<char>('a' + std::uniform_int_distribution<int>(0, 2)(gen));
      text += c;
      const StopChecker::Update update = checker.append(std::string(1, c));
      if (update.stopped) break;
      size_t hold = 0;  // longest suffix that is a proper prefix of a stop
      for (const std::string& s : stops) {
        for (size_t len = std::min(s.size() - 1, text.size()); len > hold; --len) {
          if (text.compare(text.size() - len, len, s, 0, len) == 0) {
            hold = len;
            break;
          }
        }
      }
      ASSERT_EQ(update.emit_end, text.size() - hold) << text;
    }
  }
}

}  // namespace
}  // namespace pagoda
