// The waiting queue: requests not yet admitted, or preempted and waiting to resume. One
// implementation per policy (arrival order, or priority then arrival).
#pragma once

#include <cstddef>
#include <deque>
#include <set>
#include <vector>

#include "sched/request.h"

namespace pagoda {

class RequestQueue {
 public:
  virtual ~RequestQueue() = default;

  // A newly arrived request.
  virtual void add(Request* r) = 0;
  // A preempted request: it goes ahead of the others its policy allows it to.
  virtual void add_preempted(Request* r) = 0;
  [[nodiscard]] virtual Request* front() const = 0;
  virtual void pop_front() = 0;
  // Removes r if queued (abort); returns whether it was.
  virtual bool remove(Request* r) = 0;
  [[nodiscard]] virtual size_t size() const = 0;
  [[nodiscard]] bool empty() const { return size() == 0; }
  // Front to back, for tests and invariant checks.
  [[nodiscard]] virtual std::vector<Request*> to_vector() const = 0;
};

class FcfsQueue final : public RequestQueue {
 public:
  void add(Request* r) override { q_.push_back(r); }
  // At the very front: a preempted request arrived before everything still waiting.
  void add_preempted(Request* r) override { q_.push_front(r); }
  [[nodiscard]] Request* front() const override { return q_.front(); }
  void pop_front() override { q_.pop_front(); }
  bool remove(Request* r) override;
  [[nodiscard]] size_t size() const override { return q_.size(); }
  [[nodiscard]] std::vector<Request*> to_vector() const override { return {q_.begin(), q_.end()}; }

 private:
  std::deque<Request*> q_;
};

class PriorityQueue final : public RequestQueue {
 public:
  void add(Request* r) override { q_.insert(r); }
  // Ordered like any other: its priority and original arrival decide.
  void add_preempted(Request* r) override { q_.insert(r); }
  [[nodiscard]] Request* front() const override { return *q_.begin(); }
  void pop_front() override { q_.erase(q_.begin()); }
  bool remove(Request* r) override { return q_.erase(r) > 0; }
  [[nodiscard]] size_t size() const override { return q_.size(); }
  [[nodiscard]] std::vector<Request*> to_vector() const override { return {q_.begin(), q_.end()}; }

 private:
  struct Earlier {
    bool operator()(const Request* a, const Request* b) const {
      if (a->priority() != b->priority()) return a->priority() < b->priority();
      return a->arrival_seq() < b->arrival_seq();
    }
  };
  std::set<Request*, Earlier> q_;
};

}  // namespace pagoda
