#include "sched/request_status.h"

namespace pagoda {

std::string_view to_string(RequestStatus s) {
  switch (s) {
    case RequestStatus::Waiting:
      return "waiting";
    case RequestStatus::Running:
      return "running";
    case RequestStatus::Preempted:
      return "preempted";
    case RequestStatus::FinishedStopped:
      return "finished_stopped";
    case RequestStatus::FinishedLengthCapped:
      return "finished_length_capped";
    case RequestStatus::FinishedAborted:
      return "finished_aborted";
  }
  return "unknown";
}

}  // namespace pagoda
