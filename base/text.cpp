#include "base/text.h"

#include <cstdio>
#include <iomanip>
#include <sstream>

namespace llmcap::base {

std::string describe(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string fixed(double v, int precision) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(precision) << v;
  return s.str();
}

std::string plural(int64_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string gb(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g GB", bytes / 1e9);
  return buf;
}

std::string gb_per_s(double bytes_per_s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g GB/s", bytes_per_s / 1e9);
  return buf;
}

}  // namespace llmcap::base
