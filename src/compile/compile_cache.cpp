#include "compile/compile_cache.h"

#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "compile/host_headers.h"
#include "compile/submission.h"

namespace kbench::compile {

std::string CompileCache::key(const std::string& source, const CompileOptions& options) {
  std::string material = nvrtc_version() + "\n";
  for (const auto& o : nvrtc_options(options)) material += o + "\n";
  for (const auto& h : host_compatibility_headers()) material += h.name + "\n" + h.text;
  return content_hash(material + source);
}

std::optional<CompiledDevice> CompileCache::lookup(const std::string& key) const {
  std::ifstream in(dir_ / (key + ".cbor"), std::ios::binary);
  if (!in) return std::nullopt;
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto doc = nlohmann::json::from_cbor(bytes, true, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return std::nullopt;  // a torn or foreign file is a miss, not an error
  CompiledDevice r;
  r.ok = doc.at("ok");
  r.log = doc.at("log");
  r.ptx = doc.at("ptx");
  const auto& cubin = doc.at("cubin").get_binary();
  r.cubin.assign(cubin.begin(), cubin.end());
  r.arch = doc.at("arch");
  r.options = doc.at("options").get<std::vector<std::string>>();
  r.compile_ms = doc.at("compile_ms");
  if (r.ok) r.kernels = read_kernel_signatures(r.ptx);
  r.from_cache = true;
  return r;
}

void CompileCache::store(const std::string& key, const CompiledDevice& r) const {
  std::filesystem::create_directories(dir_);
  nlohmann::json doc = {{"ok", r.ok}, {"log", r.log}, {"ptx", r.ptx}, {"arch", r.arch},
                        {"options", r.options}, {"compile_ms", r.compile_ms},
                        {"cubin", nlohmann::json::binary(std::vector<uint8_t>(r.cubin.begin(), r.cubin.end()))}};
  const auto bytes = nlohmann::json::to_cbor(doc);
  write_file_atomically(dir_ / (key + ".cbor"), std::string(bytes.begin(), bytes.end()));
}

CompiledDevice compile_device_source(const std::string& source, const std::string& file_name,
                                     const CompileOptions& options, const CompileCache* cache) {
  const std::string key = cache ? CompileCache::key(source, options) : "";
  if (cache)
    if (auto hit = cache->lookup(key)) return *hit;
  auto result = nvrtc_compile(source, file_name, options);
  if (cache) {
    try {
      cache->store(key, result);
    } catch (const std::exception&) {
      // A read-only or full cache only costs a recompile next time.
    }
  }
  return result;
}

}  // namespace kbench::compile
