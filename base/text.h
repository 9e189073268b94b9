// Shared text formatting for messages and reports. Each helper has one definition here; the
// texts are part of the behaviour (messages and outputs are compared byte for byte).
#pragma once

#include <cstdint>
#include <string>

namespace llmcap::base {

/// `v` as an std::ostream prints it by default (6 significant digits, e.g. 0.1 -> "0.1",
/// 1e-7 -> "1e-07").
std::string describe(double v);

/// `v` with `precision` digits after the point (std::fixed on an std::ostringstream), e.g.
/// fixed(2.345, 1) -> "2.3". Expects precision >= 0.
std::string fixed(double v, int precision);

/// "<n> <noun>", with an "s" added unless n == 1, e.g. plural(3, "replica") -> "3 replicas".
std::string plural(int64_t n, const std::string& noun);

/// Decimal gigabytes, 4 significant digits (printf %.4g): 141107412992 -> "141.1 GB".
std::string gb(double bytes);

/// Decimal gigabytes per second, 4 significant digits (printf %.4g): 3.35e12 -> "3350 GB/s".
std::string gb_per_s(double bytes_per_s);

}  // namespace llmcap::base
