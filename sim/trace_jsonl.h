// JSON Lines arrival traces with prefix-cache block hashes (Mooncake's format), read by
// sim::load_trace for a file whose name ends in `.jsonl`.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "sim/workload.h"

namespace llmcap::sim {

/// Whether load_trace reads `path` as JSON Lines: its name ends in ".jsonl".
bool is_jsonl_trace_path(const std::filesystem::path& path);

/// Reads a JSON Lines trace: one JSON object per line,
///   {"timestamp": <ms>, "input_length": <tokens>, "output_length": <tokens>,
///    "hash_ids": [<block hash>, ...]}
/// (other keys are ignored; blank lines skipped; a UTF-8 byte-order mark and CRLF endings
/// accepted). hash_ids are the ids of the prompt's blocks of options.hash_block_tokens tokens
/// (the last block may be partial), so there are exactly ceil(input_length / block) of them.
/// Mooncake (Qin et al., FAST 2025) publishes its traces this way with 512-token blocks.
///
/// Arrival = (timestamp - the first row's) ms / rate_multiplier, rounded to the ns; rows with
/// a (scaled) arrival >= window_s are dropped. output_length 0 reads as 1. Each request's
/// PrefixIdentity: `hashes` is one pool shared by every request of the file (the hash ids of
/// all rows in file order), begin/count its row's slice, block_tokens =
/// options.hash_block_tokens, stream = prefix_chain(kJsonlTraceStreamSalt, row index + 1)
/// (row index counts data rows from 0), a value unique to the row.
///
/// Throws InputError, one line naming the file, the line, the field, the value and what was
/// expected, for: an unreadable file, malformed JSON or a line that is not an object, a
/// missing, repeated or non-integer field, a hash id that is not an integer in [0, 2^64), a
/// hash count other than ceil(input_length / block) ("the block size contradicts its
/// lengths"), a negative timestamp or one past the end of simulated time (9.2e12 ms),
/// input_length < 1, a negative output_length, rows out of time order, a file without rows,
/// and rate_multiplier, window_s or hash_block_tokens <= 0.
std::vector<RequestSpec> load_jsonl_trace(const std::filesystem::path& path,
                                          const TraceOptions& options);

/// Salt of the rows' stream ids (see load_jsonl_trace).
inline constexpr uint64_t kJsonlTraceStreamSalt = 0xbb67ae8584caa73bULL;

}  // namespace llmcap::sim
