// `--set key=value` overrides of a scenario file's fields (issue 30, item 7): what-ifs in one
// command, e.g. `llmcap plan s.json --set tco.price_model=reserved_1y --set tco.currency=CNY`.
#pragma once

#include <string>
#include <vector>

namespace llmcap::app {

/// The scenario JSON `text` (of the file `file`, named in messages) with each override
/// "a.b.c=value" applied in order: the dotted path names object members (created when
/// missing, with their missing parents) or array elements by index ("workload.classes.0.
/// rate_per_s"); the value is JSON when it parses as JSON (a number, true, false, null, a
/// quoted string, an array or an object), else the text itself as a string. Returns the new
/// text; the scenario's own checks then apply to it as to the file. Throws base::InputError
/// naming the override, the path element and what was expected: no "=", an empty key or path
/// element, a path through a value that is not an object or array, an index that is not a
/// number or beyond the array's end; and what reading `text` as JSON throws.
std::string apply_scenario_overrides(const std::string& text, const std::string& file,
                                     const std::vector<std::string>& overrides);

/// The override among `overrides` ("key=value") that set the field `field_path` (as a
/// scenario's errors name it: "workload.classes[0].rate_per_s") or a field around it (its key
/// that path or a part of it: "slo" for "slo.p50"); the last such, as the last applied wins.
/// Empty when none did (the field is the file's own) or `field_path` is empty. Lets a front
/// end say that a refused value came from `--set`, not from the file.
std::string override_of_field(const std::vector<std::string>& overrides,
                              const std::string& field_path);

}  // namespace llmcap::app
