// Helpers of the libFuzzer targets (docs/fuzzing.md): the input as text, or as a file in a
// per-process temporary folder that is removed at exit (libFuzzer may end without running
// atexit: scripts/fuzz points TMPDIR into its own temporary folder).
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace llmcap::fuzz {

/// The shipped data folder (catalogs, models) the readers check names against.
inline std::filesystem::path data_dir() { return LLMCAP_DATA_DIR; }

/// The process's temporary folder under $TMPDIR, made on first use and removed at exit.
inline const std::filesystem::path& temp_dir() {
  static const std::filesystem::path dir = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "llmcap-fuzz-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(temp_dir(), ignored);
    });
    return std::filesystem::path(pattern);
  }();
  return dir;
}

inline std::string as_text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// Writes the input to `name` in temp_dir() and returns its path.
inline std::filesystem::path write_input(const uint8_t* data, size_t size,
                                         const std::string& name) {
  std::filesystem::path path = temp_dir() / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) std::abort();
  return path;
}

}  // namespace llmcap::fuzz
