// A submission file split into its two halves: CUDA device source for NVRTC and the TorchScript
// host program inside the single `/* kbench:host ... */` block.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

namespace kbench::compile {

struct Submission {
  std::string path;
  std::string device_source;  // the file with the host block blanked out (line numbers kept)
  std::string host_source;    // the TorchScript program
  int host_first_line = 0;    // 1-based line of the host program's first line in the file
  std::string hash;           // SHA-1 of the whole file: identical files are evaluated once
};

// A malformed submission: the verdict is host_error with this message.
struct SubmissionError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

Submission split_submission(const std::string& text, const std::string& path = "<memory>");
Submission read_submission(const std::filesystem::path& path);  // throws std::runtime_error if unreadable

// SHA-1 hex digest (c10::sha1): keys the compile cache and deduplicates batch inputs.
std::string content_hash(const std::string& bytes);

// A file's bytes; nothing when it cannot be read (callers that must tell the two apart check first).
std::string file_bytes(const std::filesystem::path& path);

// Writes `bytes` to `path` through a temporary file beside it (named per process and thread) and a
// rename, so that a reader, in this process or another, finds the old file or the whole new one,
// never part of it. With `replace` false, a file already at `path` stays (a hard link, not a
// rename): for a file that readers must keep finding as the same file. Throws std::runtime_error
// when it cannot.
void write_file_atomically(const std::filesystem::path& path, const std::string& bytes, bool replace = true);

}  // namespace kbench::compile
