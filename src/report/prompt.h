// `kbench prompt`: the text a language model gets, KernelBench-style: the task, the submission format
// (kbench's .cu, or a Triton ModelNew as upstream's Triton backend asks) with a one-shot example, the
// reference source; optionally the GPU's specifications and, for iterative refinement, feedback from
// an evaluation record.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "launch/cuda_driver.h"

namespace kbench::report {

struct PromptInput {
  std::string reference_source;   // the problem's Python file
  std::string problem_name;
  std::string degeneracy_note;    // the problem's line from problems/degenerate.json, if any
  std::string example_reference;  // the one-shot example's problem source
  std::string example_solution;   // ... and its solution in the submission format
  std::optional<launch::DeviceInfo> gpu;
  std::optional<nlohmann::json> feedback;  // an evaluation record of the previous attempt
  std::string previous_submission;         // the attempt the feedback is about
  std::string backend = "cuda";            // "cuda": kbench's .cu format; "triton": a Triton ModelNew
};

std::string build_prompt(const PromptInput& in);

// The first ```<language> block of a text: what a model's answer (or the one-shot example) contains.
std::string first_code_block(const std::string& text, const std::string& language);

}  // namespace kbench::report
