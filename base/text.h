// Shared text formatting for messages and reports. Each helper has one definition here; the
// texts are part of the behaviour (messages and outputs are compared byte for byte).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace llmcap::base {

/// `v` as an std::ostream prints it by default (6 significant digits, e.g. 0.1 -> "0.1",
/// 1e-7 -> "1e-07").
std::string describe(double v);

/// `v` with `precision` digits after the point (std::fixed on an std::ostringstream), e.g.
/// fixed(2.345, 1) -> "2.3". Expects precision >= 0.
std::string fixed(double v, int precision);

/// `s` with ASCII letters in lower case (other bytes unchanged), e.g. "On_Demand" -> "on_demand".
std::string ascii_lower(std::string s);

/// "<n> <noun>", with an "s" added unless n == 1, e.g. plural(3, "replica") -> "3 replicas".
std::string plural(int64_t n, const std::string& noun);

/// `v` with `decimals` digits after the point and thousands separators, e.g.
/// (1234567.891, 2) -> "1,234,567.89", (-1234, 0) -> "-1,234".
std::string grouped(double v, int decimals);

/// Money as every front end prints it: the currency code, a space, the amount grouped with 2
/// decimals ("USD 3.72", "CNY 26,934.10"); with `whole_from_thousand`, amounts of 1,000 or
/// more without cents ("USD 32,605").
std::string money(const std::string& currency, double amount, bool whole_from_thousand = false);

/// Whether `id` is a given fleet's row id ("fleet: 2 x a + 1 x b", plan's PlanRow::groups
/// non-empty) rather than one instance type's.
bool is_given_fleet_id(const std::string& id);
/// The prefix of a given fleet's row id.
inline constexpr const char* kGivenFleetPrefix = "fleet: ";

/// A fleet of `num_instances` instances of `instance_type`: "3 x aws-g6e.xlarge". A given
/// fleet's id (a plan row's "fleet: 1 x a prefill + 2 x b decode", which "3 x fleet: ..." would
/// make read as three such fleets) gives "fleet: 1 x a prefill + 2 x b decode (3 instances)".
std::string sized_fleet(int64_t num_instances, const std::string& instance_type);

/// `v` with `digits` (>= 1) significant digits, never in exponent form, trailing zeros after
/// the point dropped: printf %g's text wherever %g would not use an exponent, a whole number
/// from 10^(digits-1) and with thousands separators from 10^digits up: (0.06134, 3) ->
/// "0.0613", (3.5, 3) -> "3.5", (345.67, 3) -> "346", (3456.7, 3) -> "3,457", (1e-7, 3) ->
/// "0.0000001". Not finite: as describe().
std::string significant(double v, int digits);

/// Decimal gigabytes, 4 significant digits (significant()): 141107412992 -> "141.1 GB",
/// 1073741824 -> "1.074 GB", 2.5e13 -> "25,000 GB".
std::string gb(double bytes);

/// Decimal gigabytes per second, 4 significant digits (significant()): 3.35e12 -> "3350 GB/s",
/// 3.84e13 -> "38,400 GB/s".
std::string gb_per_s(double bytes_per_s);

// --- Escaping user-supplied text for each output (docs/reports.md, "Output escaping") ---------
//
// Names, paths, labels and notes come from files the user gives (scenarios, catalogs, traces,
// run documents) and may hold anything. Each output shows them as the literal text:

/// `text` safe for a terminal or a one-line field: control characters (C0, DEL, C1), Unicode's
/// invisible direction controls and line separators (U+061C, U+200E-U+200F, U+2028-U+202E,
/// U+2066-U+2069), and bytes that are not UTF-8 are written as escapes: "\n", "\r", "\t",
/// "\x1b" (C0, DEL and each byte that is not UTF-8), "\u009b" (the others). With
/// `keep_line_breaks`, '\n' and '\t' stay as they are (for whole messages and tables).
std::string printable(std::string_view text, bool keep_line_breaks = false);

/// `text` as Markdown (CommonMark/GFM) that renders as the literal text: printable() first (so
/// no line break: no new block), then a backslash before each of \ ` * _ [ ] < > # | ~ &. With
/// `block_start` (text that starts a line, e.g. a paragraph), also before a leading - + = and the
/// . or ) of a leading number ("1."), and leading spaces as "&#32;" (no list, setext heading or
/// code block).
std::string escape_markdown(std::string_view text, bool block_start = false);

/// `text` as XML 1.0 character data or an attribute value: & < > " ' as entities, tab, line
/// feed and carriage return kept; the other control characters (C0, DEL, C1: XML 1.0 forbids
/// C0, discourages the others), U+FFFE, U+FFFF and bytes that are not UTF-8 written as
/// printable() writes them ("\x1b"), so that the document is well-formed for any input.
std::string escape_xml(std::string_view text);

/// `text` as one CSV text cell (RFC 4180), neutralised against formula injection (OWASP, "CSV
/// Injection"): a cell that starts with = + - @ tab or carriage return gets a leading ' and is
/// quoted. A cell is quoted (inner quotes doubled) when neutralised, when `always_quote`, or when
/// it holds , " ; tab, line feed or carriage return. Numbers are not text cells: write them as
/// numbers (a negative number stays a number).
std::string csv_cell(std::string_view text, bool always_quote = false);

}  // namespace llmcap::base
