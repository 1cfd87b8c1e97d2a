#include "sample/stop_checker.h"

#include <deque>

#include "core/error.h"

namespace pagoda {

StopChecker::StopChecker(std::span<const std::string> stops, bool include_stop_str_in_output)
    : nodes_(1), include_(include_stop_str_in_output) {
  for (size_t i = 0; i < stops.size(); ++i) {
    if (stops[i].empty()) fail("stop cannot contain an empty string.");
    int32_t node = 0;
    for (char ch : stops[i]) {
      const auto byte = static_cast<uint8_t>(ch);
      int32_t next = child(node, byte);
      if (next < 0) {
        next = static_cast<int32_t>(nodes_.size());
        nodes_[node].next.emplace_back(byte, next);
        nodes_.push_back({});
        nodes_[next].depth = nodes_[node].depth + 1;
      }
      node = next;
    }
    if (nodes_[node].stop < 0) nodes_[node].stop = static_cast<int32_t>(i);
  }
  // Breadth first, so every fail target (a shallower node) is finished before it is used.
  std::deque<int32_t> queue;
  for (const auto& [byte, next] : nodes_[0].next) queue.push_back(next);
  while (!queue.empty()) {
    const int32_t node = queue.front();
    queue.pop_front();
    for (const auto& [byte, next] : nodes_[node].next) {
      nodes_[next].fail = node == 0 ? 0 : step(nodes_[node].fail, byte);
      const Node& fail_node = nodes_[nodes_[next].fail];
      nodes_[next].output = fail_node.stop >= 0 ? nodes_[next].fail : fail_node.output;
      queue.push_back(next);
    }
  }
}

int32_t StopChecker::child(int32_t node, uint8_t byte) const {
  for (const auto& [b, next] : nodes_[node].next) {
    if (b == byte) return next;
  }
  return -1;
}

int32_t StopChecker::step(int32_t node, uint8_t byte) const {
  while (true) {
    const int32_t next = child(node, byte);
    if (next >= 0) return next;
    if (node == 0) return 0;
    node = nodes_[node].fail;
  }
}

StopChecker::Update StopChecker::append(std::string_view delta) {
  if (stopped_) return last_;
  for (char ch : delta) {
    state_ = step(state_, static_cast<uint8_t>(ch));
    ++text_len_;
    // The node itself is the longest string ending here; output links are shorter ones.
    const int32_t match = nodes_[state_].stop >= 0 ? state_ : nodes_[state_].output;
    if (match >= 0) {
      stopped_ = true;
      const size_t stop_len = static_cast<size_t>(nodes_[match].depth);
      last_ = {include_ ? text_len_ : text_len_ - stop_len, true, nodes_[match].stop};
      return last_;
    }
  }
  const size_t hold = include_ ? 0 : static_cast<size_t>(nodes_[state_].depth);
  last_ = {text_len_ - hold, false, -1};
  return last_;
}

}  // namespace pagoda
