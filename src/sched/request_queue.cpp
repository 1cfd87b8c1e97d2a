#include "sched/request_queue.h"

#include <algorithm>

namespace pagoda {

bool FcfsQueue::remove(Request* r) {
  const auto it = std::find(q_.begin(), q_.end(), r);
  if (it == q_.end()) return false;
  q_.erase(it);
  return true;
}

}  // namespace pagoda
