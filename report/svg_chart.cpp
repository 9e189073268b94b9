#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "base/text.h"

namespace llmcap::report {
namespace {

// Tableau 10: distinguishable and colour-blind tolerable.
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr int kNumColours = sizeof kPalette / sizeof kPalette[0];
constexpr const char* kFont = "DejaVu Sans, Arial, Helvetica, sans-serif";

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

/// A "nice" step (1, 2 or 5 times a power of ten) giving about `target` intervals over span.
double nice_step(double span, int target) {
  if (!(span > 0)) return 1.0;
  const double raw = span / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double r = raw / mag;
  return (r < 1.5 ? 1.0 : r < 3.5 ? 2.0 : r < 7.5 ? 5.0 : 10.0) * mag;
}

std::string tick_label(double v, double step) {
  if (std::fabs(v) < step * 1e-9) v = 0;
  const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
  char buf[32];
  if (std::fabs(v) >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.3g", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.*f", std::min(decimals, 6), v);
  }
  return buf;
}

struct Axis {
  double lo = 0, hi = 1, step = 0.2;
};

Axis make_axis(double lo, double hi, bool from_zero) {
  if (from_zero && lo > 0) lo = 0;
  if (!(hi > lo)) {
    const double pad = std::fabs(hi) > 0 ? std::fabs(hi) * 0.5 : 1.0;
    lo -= pad;
    hi += pad;
    if (from_zero && lo < 0 && hi > 0 && lo + pad >= 0) lo = 0;
  }
  Axis a;
  a.step = nice_step(hi - lo, 5);
  a.lo = std::floor(lo / a.step + 1e-9) * a.step;
  a.hi = std::ceil(hi / a.step - 1e-9) * a.step;
  if (a.hi <= a.lo) a.hi = a.lo + a.step;
  return a;
}

}  // namespace

std::string xml_escape(const std::string& text) { return base::escape_xml(text); }

std::string render_svg(const Chart& chart, int width_px, int plot_height_px) {
  const bool bar = chart.kind == ChartKind::kBar;
  const double left = 72, right = 18, top = 34;
  const double bottom_axis = bar ? 110 : 48;  // room for tick labels (slanted for bars)
  const double plot_w = width_px - left - right;
  const double plot_h = plot_height_px;

  // Legend: entries laid out in rows below the plot (bars have one series: no legend).
  const bool legend = !bar && !chart.series.empty();
  std::vector<std::pair<double, double>> legend_pos;  // (x, row)
  int legend_rows = 0;
  if (legend) {
    double x = left;
    int row = 0;
    for (const Series& s : chart.series) {
      const double w = 26 + 7.0 * static_cast<double>(s.name.size()) + 22;
      if (x + w > width_px - right && x > left) {
        x = left;
        ++row;
      }
      legend_pos.emplace_back(x, row);
      x += w;
    }
    legend_rows = row + 1;
  }
  const double height = top + plot_h + bottom_axis + legend_rows * 18 + 6;

  // Data ranges (display units).
  double xmin = std::numeric_limits<double>::infinity(), xmax = -xmin;
  double ymin = xmin, ymax = -xmin;
  size_t num_points = 0;
  for (const Series& s : chart.series) {
    for (const auto& [x, y] : s.points) {
      const double dx = x * chart.x_display_scale, dy = y * chart.y_display_scale;
      if (!std::isfinite(dx) || !std::isfinite(dy)) continue;
      xmin = std::min(xmin, dx);
      xmax = std::max(xmax, dx);
      ymin = std::min(ymin, dy);
      ymax = std::max(ymax, dy);
      ++num_points;
    }
  }
  if (num_points == 0) xmin = ymin = 0, xmax = ymax = 1;
  Axis ax;
  if (bar) {
    ax.lo = -0.5;
    ax.hi = static_cast<double>(chart.categories.size()) - 0.5;
    ax.step = 1;
  } else if (chart.kind == ChartKind::kStep && chart.x_key == "hour") {
    ax = Axis{0, std::max(24.0, xmax), 3};
  } else {
    ax = make_axis(xmin, xmax, false);
  }
  Axis ay = chart.y_key == "fraction" ? Axis{0, 1, 0.2} : make_axis(ymin, ymax, true);

  auto px = [&](double x) { return left + (x - ax.lo) / (ax.hi - ax.lo) * plot_w; };
  auto py = [&](double y) { return top + plot_h - (y - ay.lo) / (ay.hi - ay.lo) * plot_h; };

  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" << width_px
    << "\" height=\"" << num(height) << "\" viewBox=\"0 0 " << width_px << " " << num(height)
    << "\" font-family=\"" << kFont << "\" font-size=\"11\">\n";
  o << "<title>" << xml_escape(chart.title) << "</title>\n";
  o << "<rect x=\"0\" y=\"0\" width=\"" << width_px << "\" height=\"" << num(height)
    << "\" fill=\"#ffffff\"/>\n";
  o << "<text x=\"" << num(left)
    << "\" y=\"20\" font-size=\"13\" font-weight=\"bold\" "
       "fill=\"#222222\">"
    << xml_escape(chart.title) << "</text>\n";

  // Grid and y ticks.
  for (double y = ay.lo; y <= ay.hi + ay.step * 1e-6; y += ay.step) {
    o << "<line x1=\"" << num(left) << "\" y1=\"" << num(py(y)) << "\" x2=\"" << num(left + plot_w)
      << "\" y2=\"" << num(py(y)) << "\" stroke=\"#e0e0e0\" stroke-width=\"1\"/>\n";
    o << "<text x=\"" << num(left - 6) << "\" y=\"" << num(py(y) + 4)
      << "\" text-anchor=\"end\" fill=\"#444444\">" << tick_label(y, ay.step) << "</text>\n";
  }
  // x ticks.
  if (bar) {
    for (size_t i = 0; i < chart.categories.size(); ++i) {
      const double x = px(static_cast<double>(i));
      const double y = top + plot_h + 12;
      o << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" text-anchor=\"end\" "
        << "transform=\"rotate(-35 " << num(x) << " " << num(y) << ")\" fill=\"#444444\">"
        << xml_escape(chart.categories[i]) << "</text>\n";
    }
  } else {
    for (double x = ax.lo; x <= ax.hi + ax.step * 1e-6; x += ax.step) {
      o << "<line x1=\"" << num(px(x)) << "\" y1=\"" << num(top) << "\" x2=\"" << num(px(x))
        << "\" y2=\"" << num(top + plot_h) << "\" stroke=\"#f0f0f0\" stroke-width=\"1\"/>\n";
      o << "<text x=\"" << num(px(x)) << "\" y=\"" << num(top + plot_h + 16)
        << "\" text-anchor=\"middle\" fill=\"#444444\">" << tick_label(x, ax.step) << "</text>\n";
    }
  }
  // Axes.
  o << "<line x1=\"" << num(left) << "\" y1=\"" << num(top + plot_h) << "\" x2=\""
    << num(left + plot_w) << "\" y2=\"" << num(top + plot_h)
    << "\" stroke=\"#333333\" stroke-width=\"1\"/>\n";
  o << "<line x1=\"" << num(left) << "\" y1=\"" << num(top) << "\" x2=\"" << num(left) << "\" y2=\""
    << num(top + plot_h) << "\" stroke=\"#333333\" stroke-width=\"1\"/>\n";
  // Axis labels.
  if (!chart.x_label.empty()) {
    o << "<text x=\"" << num(left + plot_w / 2) << "\" y=\"" << num(top + plot_h + 34)
      << "\" text-anchor=\"middle\" fill=\"#222222\">" << xml_escape(chart.x_label) << "</text>\n";
  }
  const double ylx = 16, yly = top + plot_h / 2;
  o << "<text x=\"" << num(ylx) << "\" y=\"" << num(yly) << "\" text-anchor=\"middle\" "
    << "transform=\"rotate(-90 " << num(ylx) << " " << num(yly) << ")\" fill=\"#222222\">"
    << xml_escape(chart.y_label) << "</text>\n";

  if (num_points == 0) {
    o << "<text x=\"" << num(left + plot_w / 2) << "\" y=\"" << num(top + plot_h / 2)
      << "\" text-anchor=\"middle\" fill=\"#888888\">no data</text>\n";
  }

  // Data.
  for (size_t si = 0; si < chart.series.size(); ++si) {
    const Series& s = chart.series[si];
    const char* colour = kPalette[si % kNumColours];
    if (bar) {
      const double w = plot_w / std::max<size_t>(chart.categories.size(), 1) * 0.6;
      for (const auto& [x, y] : s.points) {
        const double dy = y * chart.y_display_scale;
        o << "<rect x=\"" << num(px(x) - w / 2) << "\" y=\"" << num(py(std::max(dy, 0.0)))
          << "\" width=\"" << num(w) << "\" height=\"" << num(std::fabs(py(dy) - py(0)))
          << "\" fill=\"" << colour << "\"/>\n";
        o << "<text x=\"" << num(px(x)) << "\" y=\"" << num(py(std::max(dy, 0.0)) - 4)
          << "\" text-anchor=\"middle\" font-size=\"10\" fill=\"#222222\">" << num(dy)
          << "</text>\n";
      }
      continue;
    }
    std::ostringstream path;
    bool first = true;
    double last_y = 0;
    for (const auto& [x, y] : s.points) {
      const double dx = px(x * chart.x_display_scale), dy = py(y * chart.y_display_scale);
      if (!std::isfinite(dx) || !std::isfinite(dy)) continue;
      if (first) {
        path << "M" << num(dx) << " " << num(dy);
      } else if (chart.kind == ChartKind::kStep) {
        path << " L" << num(dx) << " " << num(last_y) << " L" << num(dx) << " " << num(dy);
      } else {
        path << " L" << num(dx) << " " << num(dy);
      }
      first = false;
      last_y = dy;
    }
    if (first) continue;
    o << "<path d=\"" << path.str() << "\" fill=\"none\" stroke=\"" << colour
      << "\" stroke-width=\"2\"/>\n";
    if (chart.kind == ChartKind::kLine && s.points.size() <= 30) {
      for (const auto& [x, y] : s.points) {
        o << "<circle cx=\"" << num(px(x * chart.x_display_scale)) << "\" cy=\""
          << num(py(y * chart.y_display_scale)) << "\" r=\"2.5\" fill=\"" << colour << "\"/>\n";
      }
    }
  }

  // Legend.
  for (size_t si = 0; legend && si < chart.series.size(); ++si) {
    const double x = legend_pos[si].first;
    const double y = top + plot_h + bottom_axis + legend_pos[si].second * 18;
    o << "<rect x=\"" << num(x) << "\" y=\"" << num(y - 9) << "\" width=\"20\" height=\"4\" fill=\""
      << kPalette[si % kNumColours] << "\"/>\n";
    o << "<text x=\"" << num(x + 26) << "\" y=\"" << num(y - 3) << "\" fill=\"#222222\">"
      << xml_escape(chart.series[si].name) << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace llmcap::report
