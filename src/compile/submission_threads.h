// The native threads a ModelNew's extensions start. Python threads are refused outright
// (python_runtime.h); a thread started from C++ (std::thread, pthread_create) is watched instead:
// the PyTorch ops it calls and the kernels it launches count as the submission's, and it may not
// outlive the call that started it, since work it keeps queued after the call would run into
// kbench's own calls and timing (a thread that keeps the GPU busy raises the idle floor of the
// timer, and slows the eager baseline).
//
// kbench's executable defines pthread_create itself (exported, so that every library's calls bind
// to it) and hands each call on to the C library's. A thread is the submission's where the first
// frame of its creator's stack outside the C and C++ runtimes lies in a library the submission
// built, or where a thread of the submission creates it. Threads PyTorch starts on the
// submission's behalf (its pools) are PyTorch's.
#pragma once

#include <string>

namespace kbench::compile {

// A library built from the submission's sources (an extension), as it will be loaded.
void add_submission_library(const std::string& path);

// True on a thread the submission started.
bool on_submission_thread();

// The submission's threads running now.
int submission_threads_running();

// "" while none of the submission's threads runs; otherwise the refusal, tagged as python_runtime.h's
// refusals are ("[kbench:refused] ..."), naming `after` ("its call").
std::string submission_threads_left(const std::string& after);

}  // namespace kbench::compile
