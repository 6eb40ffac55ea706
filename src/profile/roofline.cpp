#include "profile/roofline.h"

namespace kbench::profile {
namespace {

nlohmann::json achieved(const RooflineInputs& in, double floor_ms, double ms) {
  nlohmann::json j = {{"ms", ms}};
  if (in.peak_bandwidth > 0) {
    j["bytes_per_s"] = static_cast<double>(in.bytes) / (ms * 1e-3);
    j["bandwidth_fraction"] = floor_ms / ms;
    j["times_floor"] = floor_ms > 0 ? ms / floor_ms : 0.0;
  }
  if (in.flops > 0) {
    j["flops_per_s"] = in.flops / (ms * 1e-3);
    if (in.peak_flops > 0) j["flops_fraction"] = in.flops / (ms * 1e-3) / in.peak_flops;
  }
  return j;
}

}  // namespace

nlohmann::json roofline(const RooflineInputs& in, double candidate_ms, double reference_ms) {
  const double floor_ms = in.peak_bandwidth > 0 ? static_cast<double>(in.bytes) / in.peak_bandwidth * 1e3 : 0.0;
  nlohmann::json j = {{"bytes", in.bytes},
                      {"peak_bytes_per_s", in.peak_bandwidth > 0 ? nlohmann::json(in.peak_bandwidth) : nlohmann::json()},
                      {"floor_ms", in.peak_bandwidth > 0 ? nlohmann::json(floor_ms) : nlohmann::json()},
                      {"flops", in.flops > 0 ? nlohmann::json(in.flops) : nlohmann::json()},
                      {"peak_flops_per_s", in.peak_flops > 0 ? nlohmann::json(in.peak_flops) : nlohmann::json()}};
  if (candidate_ms > 0) j["candidate"] = achieved(in, floor_ms, candidate_ms);
  if (reference_ms > 0) j["reference"] = achieved(in, floor_ms, reference_ms);
  return j;
}

}  // namespace kbench::profile
