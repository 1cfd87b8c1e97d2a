// RequestOutput::queue_time_s: seconds from add_request to the first scheduling, on the
// first delta. A request queued behind a full batch waits at least as long as the steps
// that ran before it was admitted.
#include <chrono>

#include "engine_test_util.h"

namespace pagoda::testing {
namespace {

TEST(EngineQueueTime, SetOnTheFirstDeltaAndCoversTheStepsSpentWaiting) {
  PAGODA_NEED_SMOLLM2(b);
  EngineOptions o = small_options();
  o.max_num_seqs = 1;  // "second" waits until "first" is done
  auto core = make_core(*b, o);
  core->add_request("first", {1, 2, 3, 4}, greedy(4));
  core->add_request("second", {5, 6, 7, 8}, greedy(2));
  std::map<RequestId, int> num_with_queue_time;
  std::map<RequestId, double> queue_time;
  std::map<RequestId, bool> first_delta_had_it;
  double seconds_before_second_ran = 0;
  while (core->has_unfinished_requests()) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<RequestOutput> outs = core->step();
    bool second_started = false;
    for (const RequestOutput& d : outs) {
      if (!first_delta_had_it.count(d.id)) first_delta_had_it[d.id] = d.queue_time_s.has_value();
      if (d.queue_time_s) {
        ++num_with_queue_time[d.id];
        queue_time[d.id] = *d.queue_time_s;
      }
      second_started = second_started || d.id == "second";
    }
    if (!second_started) {
      seconds_before_second_ran += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
  }
  for (const char* id : {"first", "second"}) {
    EXPECT_TRUE(first_delta_had_it[id]) << id;
    EXPECT_EQ(num_with_queue_time[id], 1) << id << ": only the first delta carries it";
    EXPECT_GE(queue_time[id], 0.0) << id;
  }
  // "second" waited through every step of "first" (4 decodes), not counting the step
  // that scheduled it.
  EXPECT_GE(queue_time["second"], seconds_before_second_ran * 0.9);
  EXPECT_GT(queue_time["second"], queue_time["first"]);
}

}  // namespace
}  // namespace pagoda::testing
