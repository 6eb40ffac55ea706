// The body of POST /v1/eval, checked before anything is queued:
//   {"source": "<the .cu file>", "level": 2, "problem": 12, "options": {"trials": 3, ...},
//    "name": "my_kernel.cu", "format": "kbench"}
// `options` are kbench eval's flags by name (sandbox/eval_options.h); `name` (optional) is what the
// record calls the submission, as a local eval's record names its file; `format` (optional) is
// "kbench" (a .cu) or "modelnew" (KernelBench's ModelNew .py), by default the one `name`'s extension
// says (.py: modelnew), else kbench.
#pragma once

#include <string>

#include "problems/catalog.h"
#include "sandbox/eval_options.h"

namespace kbench::serve {

struct EvalCall {
  std::string source;
  std::string name;                // "" : the record names the stored file
  bool modelnew = false;           // KernelBench's ModelNew format, not kbench's .cu
  sandbox::EvalSettings settings;  // level, problem and options applied on the server's defaults
};

// Throws ApiError: 400 (not JSON, not an object, a missing or mistyped field, an unknown field or
// option, a bad option value), 404 (no such problem, or it cannot be evaluated here: its archive is
// not exported, or it needs a newer PyTorch), 413 (source over `max_source_bytes`).
EvalCall parse_eval_call(const std::string& body, const problems::Catalog& catalog,
                         const sandbox::EvalSettings& defaults, size_t max_source_bytes);

}  // namespace kbench::serve
