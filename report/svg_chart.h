// A small SVG chart writer for the report (internal to report/): line, step and bar charts with
// axes, 1-2-5 ticks and a legend, as SVG 1.1 using presentation attributes only (no CSS), so
// that browsers and Qt's SVG Tiny renderer (the PDF writer's QSvgRenderer) draw it alike.
#pragma once

#include <string>

#include "report/report_model.h"

namespace llmcap::report {

/// `chart` as a standalone <svg> element `width_px` wide (the height grows with the legend).
/// Values are scaled by the chart's display scales. A chart without points draws its axes and
/// the words "no data".
std::string render_svg(const Chart& chart, int width_px = 640, int plot_height_px = 300);

/// `text` as XML character data or attribute value: base::escape_xml (&, <, >, " and ' as
/// entities; characters XML forbids and bytes that are not UTF-8 as printable escapes).
std::string xml_escape(const std::string& text);

}  // namespace llmcap::report
