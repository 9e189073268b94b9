// The llmcap command line as a library: main() is three lines, tests drive run() with argv.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace llmcap::cli {

/// Exit codes.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInternalError = 1;
inline constexpr int kExitBadInput = 2;  ///< bad arguments, files, fields or values

/// Runs `llmcap <args...>` (args exclude the program name). Normal output goes to `out`,
/// errors to `err` as one line `llmcap: error: <message>`. Output files are written only when
/// the whole command succeeded, each to a temporary file renamed into place.
/// Control characters other than line feed and tab in what it prints to `out` and `err`, and
/// bytes that are not UTF-8, are written as base::printable escapes (ESC as "\x1b").
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace llmcap::cli
