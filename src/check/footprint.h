// The GPU memory an evaluation of a problem needs at its peak, measured: the reference's weights and
// the candidate's copy of them, one input set, a candidate's output (the reference's own output
// stands in for it) and the reference's forward with its temporaries and output, as a correctness
// trial holds them. A timed call holds no more (one input set redrawn in place, the same two
// outputs on a checked call). `kbench footprint --write` measures every problem on a GPU into
// problems/footprint.json; under --gpu-memory, a problem measured to need more than the limit is
// measured again with the candidate's output in host memory while the reference runs, and kbench
// evaluates it so, or refuses before running where that needs more too.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "problems/reference.h"

namespace kbench::check {

struct Footprint {
  int64_t peak_bytes = 0;  // the most the caching allocator had allocated at once
  int64_t input_bytes = 0, output_bytes = 0, weight_bytes = 0;
};

// On the GPU the reference was loaded on (its weights there already); resets the allocator's peak
// statistics. `offload_candidate_output`: as an evaluation that keeps the candidate's output in host
// memory while the reference runs (CheckOptions). Throws what the reference throws: out of memory
// under a --gpu-memory limit, say.
Footprint measure_footprint(problems::Reference& reference, uint64_t seed, bool offload_candidate_output = false);

nlohmann::json to_json(const Footprint& f);

// A problem's entry in problems/footprint.json when it ran out of memory under a limit of
// `limit_bytes`: all that is known is that it needs more.
nlohmann::json exceeded_limit_json(int64_t limit_bytes);

}  // namespace kbench::check
