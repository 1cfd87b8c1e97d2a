#include "io/special_tokens.h"

#include <algorithm>
#include <map>

namespace pagoda {

SpecialTokenMatcher::SpecialTokenMatcher(const std::vector<std::string>& texts,
                                         std::vector<Candidate> candidates)
    : texts_(texts), candidates_(std::move(candidates)) {
  std::erase_if(candidates_, [&](const Candidate& c) { return texts_[c.id].empty(); });
  std::sort(candidates_.begin(), candidates_.end(), [&](const Candidate& a, const Candidate& b) {
    const size_t la = texts_[a.id].size(), lb = texts_[b.id].size();
    return la != lb ? la > lb : a.id < b.id;
  });
  // Build a map-based trie, then flatten it into sorted edge arrays.
  struct BuildNode {
    int32_t candidate = -1;
    std::map<uint8_t, uint32_t> next;
  };
  std::vector<BuildNode> build(1);
  for (size_t c = 0; c < candidates_.size(); ++c) {
    uint32_t node = 0;
    for (char ch : texts_[candidates_[c].id]) {
      const auto byte = static_cast<uint8_t>(ch);
      auto it = build[node].next.find(byte);
      if (it == build[node].next.end()) {
        build.emplace_back();
        it = build[node].next.emplace(byte, static_cast<uint32_t>(build.size() - 1)).first;
      }
      node = it->second;
    }
    if (build[node].candidate < 0) build[node].candidate = static_cast<int32_t>(c);
  }
  nodes_.resize(build.size());
  for (size_t n = 0; n < build.size(); ++n) {
    nodes_[n].candidate = build[n].candidate;
    nodes_[n].first_edge = static_cast<uint32_t>(edges_.size());
    nodes_[n].n_edges = static_cast<uint32_t>(build[n].next.size());
    for (const auto& [byte, to] : build[n].next) edges_.push_back({byte, to});
  }
}

uint32_t SpecialTokenMatcher::child(uint32_t node, uint8_t byte) const {
  const Node& n = nodes_[node];
  const Edge* first = edges_.data() + n.first_edge;
  const Edge* last = first + n.n_edges;
  const Edge* it =
      std::lower_bound(first, last, byte, [](const Edge& e, uint8_t b) { return e.byte < b; });
  return it != last && it->byte == byte ? it->node : 0;  // 0: no child (root is never a child)
}

void SpecialTokenMatcher::partition(std::string_view text, bool parse_special,
                                    std::vector<Fragment>& out) const {
  out.clear();
  if (text.empty()) return;
  const auto allowed = [&](int32_t c) { return parse_special || candidates_[c].always; };

  // Which candidates occur anywhere in the text (an occurrence inside a fragment is one
  // in the text, so nothing else can match below).
  std::vector<int32_t> present;
  if (nodes_.size() > 1) {
    std::vector<char> seen(candidates_.size(), 0);
    for (size_t i = 0; i < text.size(); ++i) {
      uint32_t node = 0;
      for (size_t k = i; k < text.size(); ++k) {
        node = child(node, static_cast<uint8_t>(text[k]));
        if (node == 0) break;
        const int32_t c = nodes_[node].candidate;
        if (c >= 0 && !seen[c] && allowed(c)) {
          seen[c] = 1;
          present.push_back(c);
        }
      }
    }
  }
  out.push_back({0, static_cast<uint32_t>(text.size()), -1});
  if (present.empty()) return;
  std::sort(present.begin(), present.end());  // candidate order is priority order

  std::vector<Fragment> next;
  for (int32_t c : present) {
    const std::string& needle = texts_[candidates_[c].id];
    next.clear();
    for (const Fragment& f : out) {
      if (f.token >= 0) {
        next.push_back(f);
        continue;
      }
      const std::string_view hay = text.substr(0, f.end);
      size_t pos = f.begin;
      while (pos < f.end) {
        const size_t hit = hay.find(needle, pos);
        if (hit == std::string_view::npos) break;
        if (hit > pos) next.push_back({static_cast<uint32_t>(pos), static_cast<uint32_t>(hit), -1});
        next.push_back({0, 0, candidates_[c].id});
        pos = hit + needle.size();
      }
      if (pos < f.end) next.push_back({static_cast<uint32_t>(pos), f.end, -1});
    }
    out.swap(next);
  }
}

}  // namespace pagoda
