// Internal to the readers of model/ (not a public header): one JSON file read with errors that
// name it. The reader is base::read_json_file (base/json_reader.h).
#pragma once

#include "base/json_reader.h"

namespace llmcap::model {

/// Parses the JSON file at `path`. Throws InputError "<path>: cannot open file" or
/// "<path>: malformed JSON: <parser message>".
using base::read_json_file;

}  // namespace llmcap::model
