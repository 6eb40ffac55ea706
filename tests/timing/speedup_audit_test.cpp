// The speedup audit's rule, with the H100's figures: no GPU is needed to check arithmetic.
#include "timing/speedup_audit.h"

#include "catch.h"

using namespace kbench;

namespace {
constexpr double kH100Bandwidth = 2.0 * 2619e6 * 5120 / 8;  // 3.35 TB/s: memory clock x bus width, two transfers a clock
constexpr int64_t kGiB = int64_t{1} << 30;
}  // namespace

TEST_CASE("a speedup above the threshold and under the bandwidth floor is flagged", "[timing]") {
  // HingeLoss: 4 GiB of predictions in, a scalar out; eager 13.4 ms; a constant kernel takes 5 us.
  const auto a = timing::audit_speedup(4 * kGiB, 4, kH100Bandwidth, 0.005, 13.4);
  CHECK(a.flagged);
  CHECK(a.floor_ms == Approx(4.0 * kGiB / kH100Bandwidth * 1e3));
  CHECK(a.max_speedup == Approx(13.4 / a.floor_ms));
  CHECK_THAT(a.reason, contains_text("peak bandwidth"));
}

TEST_CASE("a fast kernel at or above the floor, or a modest speedup, is not flagged", "[timing]") {
  // ReLU over 6 GiB in and out: the floor is about 3.8 ms; a kernel at 4.2 ms is honest.
  CHECK_FALSE(timing::audit_speedup(6 * kGiB, 6 * kGiB, kH100Bandwidth, 4.2, 4.29).flagged);
  // Under the floor but only 3.9x faster (below the threshold): left to the verdict, not the audit.
  CHECK_FALSE(timing::audit_speedup(6 * kGiB, 6 * kGiB, kH100Bandwidth, 2.2, 8.68).flagged);
  // 50x over eager on a small problem whose floor is microseconds: a real fusion, not flagged.
  CHECK_FALSE(timing::audit_speedup(1 << 20, 1 << 20, kH100Bandwidth, 0.02, 1.0).flagged);
  // Unknown bandwidth: nothing can be said.
  CHECK_FALSE(timing::audit_speedup(4 * kGiB, 4, 0, 0.005, 13.4).flagged);
  const auto j = timing::to_json(timing::audit_speedup(4 * kGiB, 4, kH100Bandwidth, 0.005, 13.4));
  CHECK(j["flagged"] == true);
  CHECK(j["threshold"] == Approx(timing::kDefaultSuspiciousSpeedup));
}

TEST_CASE("a candidate fast only on the problem's own inputs is flagged, unless the reference is too", "[timing]") {
  // Zeros on U[0, 1) inputs in 0.03 ms, an honest product elsewhere in 2.7 ms; the reference 2.7 ms everywhere.
  const std::map<std::string, double> reference = {{"own", 2.7}, {"normal", 2.7}, {"logistic_x10", 2.8}};
  const auto shortcut = timing::audit_distribution_speed({{"own", 0.03}, {"normal", 2.7}, {"logistic_x10", 2.7}}, reference);
  CHECK(shortcut.measured);
  CHECK(shortcut.flagged);
  CHECK(shortcut.candidate_others_ms == Approx(2.7));
  CHECK_THAT(shortcut.reason, contains_text("own inputs"));
  // An honest kernel: the same time everywhere, or slower elsewhere by less than 1.5x.
  CHECK_FALSE(timing::audit_distribution_speed({{"own", 1.0}, {"normal", 1.1}, {"logistic_x10", 1.4}}, reference).flagged);
  // Data-dependent speed that the reference shows too is not the candidate's doing.
  CHECK_FALSE(timing::audit_distribution_speed({{"own", 1.0}, {"normal", 2.0}}, {{"own", 1.0}, {"normal", 1.8}}).flagged);
  // Only distributions both were timed on count; with none in common nothing is said.
  const auto unmeasured = timing::audit_distribution_speed({{"own", 0.03}, {"normal", 2.7}}, {{"own", 2.7}});
  CHECK_FALSE(unmeasured.measured);
  CHECK_FALSE(unmeasured.flagged);
  // The record's audit is flagged when either audit is, and says why.
  const auto j = timing::to_json(timing::audit_speedup(1 << 20, 1 << 20, kH100Bandwidth, 0.03, 2.7), shortcut);
  CHECK(j["flagged"] == true);
  CHECK(j["bandwidth"]["flagged"] == false);
  CHECK(j["distribution"]["flagged"] == true);
  CHECK_THAT(j["reason"].get<std::string>(), contains_text("own inputs"));
}
