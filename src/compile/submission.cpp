#include "compile/submission.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <vector>

#include <c10/util/hash.h>

namespace kbench::compile {
namespace {

constexpr std::string_view kHostOpen = "/* kbench:host";
constexpr std::string_view kClose = "*/";

// Python is indentation-sensitive: drop the indentation that every non-blank line shares.
std::string dedent(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  while (!lines.empty() && lines.back().find_first_not_of(" \t\r") == std::string::npos) lines.pop_back();
  size_t common = std::string::npos;
  for (const auto& l : lines) {
    const auto first = l.find_first_not_of(" \t");
    if (first != std::string::npos) common = std::min(common, first);
  }
  std::string out;
  for (const auto& l : lines) out += (l.size() >= common && common != std::string::npos ? l.substr(common) : "") + "\n";
  return out;
}

}  // namespace

Submission split_submission(const std::string& text, const std::string& path) {
  Submission s;
  s.path = path;
  s.hash = content_hash(text);
  const auto open = text.find(kHostOpen);
  if (open == std::string::npos)
    throw SubmissionError("no host program: the file needs one `/* kbench:host ... */` block with def forward(...)");
  if (text.find(kHostOpen, open + kHostOpen.size()) != std::string::npos)
    throw SubmissionError("more than one `/* kbench:host` block: a submission has exactly one host program");
  const auto body = text.find('\n', open);
  const auto close = text.find(kClose, open + kHostOpen.size());
  if (close == std::string::npos || body == std::string::npos || body > close)
    throw SubmissionError("unterminated `/* kbench:host` block: it must end with `*/` on a later line");
  s.host_source = dedent(text.substr(body + 1, close - body - 1));
  s.host_first_line = 2 + static_cast<int>(std::count(text.begin(), text.begin() + open, '\n'));
  // Blank the host block but keep its newlines, so NVRTC's line numbers match the file.
  s.device_source = text;
  for (size_t i = open; i < close + kClose.size(); ++i)
    if (s.device_source[i] != '\n') s.device_source[i] = ' ';
  return s;
}

Submission read_submission(const std::filesystem::path& path) {
  if (!std::ifstream(path)) throw std::runtime_error("cannot read submission " + path.string());
  return split_submission(file_bytes(path), path.string());
}

std::string content_hash(const std::string& bytes) { return c10::sha1(bytes).str(); }

std::string file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_file_atomically(const std::filesystem::path& path, const std::string& bytes, bool replace) {
  auto tmp = path;
  tmp += "." + std::to_string(::getpid()) + "." +
         std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())) + ".tmp";
  std::error_code ec;
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush()) ec = std::make_error_code(std::errc::io_error);
  }
  bool in_place = false;  // the path holds this file, or one that was there already and stays
  if (!ec && !replace) {
    std::filesystem::create_hard_link(tmp, path, ec);
    in_place = !ec || ec == std::errc::file_exists;
    ec.clear();  // any other failure: a file system without hard links, which renames instead
  }
  if (!ec && !in_place) std::filesystem::rename(tmp, path, ec);
  const auto reason = ec.message();
  std::error_code ignored;  // a temporary left behind is no failure of a file in place
  if (in_place || ec) std::filesystem::remove(tmp, ignored);
  if (ec) throw std::runtime_error("cannot write " + path.string() + ": " + reason);
}

}  // namespace kbench::compile
