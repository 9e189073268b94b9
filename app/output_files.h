// The output files of a command: checked against its inputs before it runs, staged in temporary
// files, and moved into place together only when every one of them was written (issue 29,
// item 3; docs/cli.md, "Output files").
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace llmcap::app {

/// A path given to a command, with the option or argument that gave it: {"--json", "out.json"},
/// {"scenario", "s.json"}. `option` is how messages name the path.
struct NamedPath {
  std::string option;
  std::string path;  ///< "" when the option was not given (then ignored)
};

/// Refuses, before a command runs, output paths that would lose data or surprise. Throws
/// base::InputError (exit 2) with one line naming the option and its value:
/// - `"-"`: `--json -: standard output is not supported for output files; expected a file path
///   (write ./- for a file named "-")`;
/// - a path that resolves to one of `inputs` (same text, through `.`, `..` or symbolic links,
///   or a hard link to it): `--json s.json: is the input file of scenario (s.json); expected an
///   output path that is not an input`;
/// - two outputs resolving to one file: `--csv x: is also the output of --json; expected a
///   different file for each output`;
/// - an existing folder: `--json d: is a folder; expected a file path`.
/// Empty paths in either list are ignored.
void check_output_paths(const std::vector<NamedPath>& outputs,
                        const std::vector<NamedPath>& inputs);

/// Every regular file under `data_dir` (the catalogs, models, engines, claims: what --data-dir
/// gives a command), each named `--data-dir`, as `inputs` of check_output_paths: an output
/// must never overwrite the catalog it was computed from. Empty when the folder is absent.
std::vector<NamedPath> data_dir_inputs(const std::filesystem::path& data_dir);

/// The files one command writes, committed together. add() only records the contents; commit()
/// first writes every file to `TARGET.tmp.<pid>` in the target's folder, and only when all of
/// them were written renames each into place. When any write fails, every temporary file is
/// removed, no target is touched, and commit() throws base::InputError:
/// `--csv /no/dir/x.csv: cannot write file: No such file or directory; no output was written`
/// (without an option: `/no/dir/x.csv: cannot write file: ...`). A rename failing after others
/// succeeded (only when the folder changes under the command) throws naming the outputs already
/// in place. Before writing, the stale temporary files of each target are removed
/// (remove_stale_temporaries). An OutputSet never committed writes nothing: its destructor
/// removes the temporary files of a stage() not followed by commit().
class OutputSet {
 public:
  OutputSet() = default;
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;
  ~OutputSet();

  /// Records one output; an empty `path` is ignored (the option was not given).
  void add(std::string option, std::filesystem::path path, std::string contents);
  /// The first half of commit(): writes every recorded output to its temporary file, throwing
  /// as commit() does (with every temporary file removed). For a command with another kind of
  /// output (a database) to write between the two halves; add() is refused afterwards.
  void stage();
  /// Stages (unless stage() was called) and moves every output into place; the set is empty
  /// afterwards.
  void commit();
  /// Number of recorded outputs.
  size_t size() const { return files_.size(); }

 private:
  struct File {
    std::string option;
    std::filesystem::path path;
    std::string contents;
  };
  std::vector<File> files_;
  std::vector<std::filesystem::path> temporaries_;  ///< written by stage(), one per file
  bool staged_ = false;
};

/// Writes `contents` to `path` through a temporary file in the same folder renamed into place,
/// so that a reader never sees a half-written file: an OutputSet of one file without an option.
/// Throws base::InputError naming the path.
void write_file_atomically(const std::filesystem::path& path, const std::string& contents);

/// The temporary file this process writes `target` through: `TARGET.tmp.<pid>`.
std::filesystem::path temporary_path(const std::filesystem::path& target);

/// Removes the files `TARGET.tmp.<pid>` next to `target` left by processes that no longer exist
/// (kill(pid, 0) fails with ESRCH), e.g. a writer killed mid-write. Files of live processes,
/// this process's own, and names that do not end in a process id are left. Returns how many
/// were removed; never throws (a file that cannot be removed is left).
size_t remove_stale_temporaries(const std::filesystem::path& target);

}  // namespace llmcap::app
