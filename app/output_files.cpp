#include "app/output_files.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "base/error.h"

namespace llmcap::app {
namespace {

namespace fs = std::filesystem;

/// `--json out.json`, or `out.json` without an option.
std::string label(const std::string& option, const std::string& path) {
  return option.empty() ? path : option + " " + path;
}

/// The absolute path with `.`, `..` and symbolic links of its existing part resolved.
fs::path resolved(const std::string& path) {
  std::error_code ec;
  fs::path absolute = fs::absolute(path, ec);
  if (ec) return fs::path(path).lexically_normal();
  fs::path canonical = fs::weakly_canonical(absolute, ec);
  return ec ? absolute.lexically_normal() : canonical;
}

/// Whether two paths name one file: the same resolved path, or (both existing) one file
/// through hard links.
bool same_file(const std::string& a, const std::string& b) {
  if (resolved(a) == resolved(b)) return true;
  std::error_code ec;
  const bool equivalent = fs::equivalent(a, b, ec);
  return !ec && equivalent;
}

/// The reason of the last failed system call, for messages.
std::string last_error_text(int error) {
  return error != 0 ? std::strerror(error) : std::string("unknown error");
}

void remove_quietly(const fs::path& path) {
  std::error_code ignored;
  fs::remove(path, ignored);
}

/// Writes `contents` to `tmp`; returns "" or the reason it failed (the partial file removed).
std::string write_temporary(const fs::path& target, const fs::path& tmp,
                            const std::string& contents) {
  std::error_code ec;
  if (fs::is_directory(target, ec)) return "is a folder";
  errno = 0;
  std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
  if (!f) return last_error_text(errno);
  f << contents;
  f.flush();
  f.close();
  if (!f) {
    const int error = errno;
    remove_quietly(tmp);
    return "write failed: " + last_error_text(error);
  }
  return "";
}

}  // namespace

void check_output_paths(const std::vector<NamedPath>& outputs,
                        const std::vector<NamedPath>& inputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const NamedPath& o = outputs[i];
    if (o.path.empty()) continue;
    if (o.path == "-") {
      throw base::InputError(o.option +
                             " -: standard output is not supported for output files; expected a "
                             "file path (write ./- for a file named \"-\")");
    }
    std::error_code ec;
    if (fs::is_directory(o.path, ec)) {
      throw base::InputError(label(o.option, o.path) + ": is a folder; expected a file path");
    }
    for (const NamedPath& in : inputs) {
      if (in.path.empty() || !same_file(o.path, in.path)) continue;
      throw base::InputError(label(o.option, o.path) + ": is the input file of " + in.option +
                             " (" + in.path + "); expected an output path that is not an input");
    }
    for (size_t j = 0; j < i; ++j) {
      if (outputs[j].path.empty() || !same_file(o.path, outputs[j].path)) continue;
      throw base::InputError(label(o.option, o.path) + ": is also the output of " +
                             outputs[j].option + "; expected a different file for each output");
    }
  }
}

std::vector<NamedPath> data_dir_inputs(const fs::path& data_dir) {
  std::vector<NamedPath> inputs;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(data_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) inputs.push_back({"--data-dir", it->path().string()});
  }
  return inputs;
}

fs::path temporary_path(const fs::path& target) {
  return fs::path(target.string() + ".tmp." + std::to_string(static_cast<long>(::getpid())));
}

size_t remove_stale_temporaries(const fs::path& target) {
  const std::string prefix = target.filename().string() + ".tmp.";
  if (prefix == ".tmp.") return 0;
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const long own_pid = static_cast<long>(::getpid());
  std::error_code ec;
  fs::directory_iterator it(folder, ec);
  if (ec) return 0;
  size_t removed = 0;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const long pid = std::stol(digits);
    if (pid <= 0 || pid == own_pid) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or unknown
    std::error_code remove_error;
    if (fs::remove(it->path(), remove_error)) ++removed;
  }
  return removed;
}

OutputSet::~OutputSet() {
  for (const fs::path& t : temporaries_) remove_quietly(t);
}

void OutputSet::add(std::string option, fs::path path, std::string contents) {
  if (path.empty()) return;
  if (staged_) throw std::logic_error("OutputSet::add after stage()");
  files_.push_back(File{std::move(option), std::move(path), std::move(contents)});
}

void OutputSet::stage() {
  if (staged_) return;
  staged_ = true;
  for (const File& f : files_) remove_stale_temporaries(f.path);
  for (File& f : files_) {
    const fs::path tmp = temporary_path(f.path);
    const std::string failure = write_temporary(f.path, tmp, f.contents);
    if (!failure.empty()) {
      for (const fs::path& t : temporaries_) remove_quietly(t);
      temporaries_.clear();
      const std::string where = label(f.option, f.path.string());
      files_.clear();
      staged_ = false;
      throw base::InputError(where + ": cannot write file: " + failure + "; no output was written");
    }
    temporaries_.push_back(tmp);
    std::string().swap(f.contents);  // written: no need to hold it twice
  }
}

void OutputSet::commit() {
  stage();
  std::vector<File> files = std::move(files_);
  std::vector<fs::path> temporaries = std::move(temporaries_);
  files_.clear();
  temporaries_.clear();
  staged_ = false;
  std::string placed;
  for (size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    fs::rename(temporaries[i], files[i].path, ec);
    if (!ec) {
      placed += (placed.empty() ? "" : ", ") + label(files[i].option, files[i].path.string());
      continue;
    }
    for (size_t j = i; j < files.size(); ++j) remove_quietly(temporaries[j]);
    throw base::InputError(
        label(files[i].option, files[i].path.string()) +
        ": cannot move the finished file into place: " + ec.message() +
        (placed.empty() ? "; no output was written" : "; already written: " + placed));
  }
}

void write_file_atomically(const fs::path& path, const std::string& contents) {
  if (path.empty()) throw base::InputError("output file: empty file name");
  OutputSet set;
  set.add("", path, contents);
  set.commit();
}

}  // namespace llmcap::app
