// PDF writer (Qt 6): the report as a QTextDocument in Qt's rich-text HTML subset, each chart
// drawn from its SVG (svg_chart.h) by QSvgRenderer into an image resource, printed with
// QPdfWriter. Qt stays in this file.
#include <QBuffer>
#include <QByteArray>
#include <QCoreApplication>
#include <QFont>
#include <QGuiApplication>
#include <QHashFunctions>
#include <QImage>
#include <QMarginsF>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QString>
#include <QSvgRenderer>
#include <QTextDocument>
#include <QUrl>
#include <QVariant>
#include <QtGlobal>
#include <algorithm>
#include <sstream>
#include <vector>

#include "base/text.h"
#include "report/report.h"
#include "report/report_model.h"
#include "report/svg_chart.h"

namespace llmcap::report {
namespace {

constexpr int kChartWidthPx = 760;  ///< SVG width; the image is drawn at this size in the PDF
constexpr int kChartPlotHeightPx = 260;
constexpr double kImageOversample = 2.0;  ///< raster resolution over the drawn size
/// Printer margins; QTextDocument::print adds 2 cm of its own around an unpaginated document.
constexpr double kMarginMm = 1;
constexpr size_t kMaxColumnWeight = 40;  ///< characters; a longer text column wraps
constexpr size_t kMinColumnWeight = 4;   ///< characters; "yes", "gpu" and their labels fit
constexpr double kBodyPointSize = 8.5;
constexpr double kMinTablePointSize = 6.0;  ///< a wider table is left to wrap
/// Characters of kBodyPointSize text across the printed width (A4 landscape less Qt's margins),
/// set from rendered reports (wider, a 15-column table ran off the page's right edge).
constexpr double kLineChars = 110;
constexpr double kCellPaddingChars = 2;  ///< padding and border of one cell, in characters
/// Longest unbreakable piece of a wrappable text cell that gets a line of its own; longer
/// words (URLs) may still wrap inside.
constexpr size_t kMaxWordChars = 16;
/// Width a wrapping text column (reasons, hardware) is given before the font is made smaller.
constexpr double kComfortChars = 22;

/// A QGuiApplication for fonts and painting: the existing one, or one on the "offscreen"
/// platform created (once, kept for the process) when no QCoreApplication exists.
void ensure_gui_application() {
  if (QCoreApplication* app = QCoreApplication::instance(); app != nullptr) {
    if (qobject_cast<QGuiApplication*>(app) == nullptr) {
      throw ReportError(
          "pdf: this process has a QCoreApplication without GUI support; PDF rendering needs a "
          "QGuiApplication (or none, and llmcap starts an offscreen one)");
    }
    return;
  }
  static int argc = 3;
  static char arg0[] = "llmcap";
  static char arg1[] = "-platform";
  static char arg2[] = "offscreen";
  static char* argv[] = {arg0, arg1, arg2, nullptr};
  // Start-up notes (e.g. "XDG_RUNTIME_DIR not set") are not the report's business: silenced
  // while the application is constructed only.
  const QtMessageHandler previous =
      qInstallMessageHandler([](QtMsgType, const QMessageLogContext&, const QString&) {});
  // Qt's hashes are seeded per process by default, and the PDF writer's order of embedded font
  // objects follows one: with a fixed seed two runs write the same bytes (but the date).
  QHashSeed::setDeterministicGlobalSeed();
  // Deliberately never destroyed: Qt objects may outlive any scope of ours.
  new QGuiApplication(argc, argv);
  qInstallMessageHandler(previous);
}

/// User text for Qt's rich text: control characters and bytes that are not UTF-8 as
/// base::printable escapes (line breaks kept), then HTML-escaped.
QString q(const std::string& s) {
  return QString::fromStdString(base::printable(s, true)).toHtmlEscaped();
}

bool right_aligned(CellFormat f) { return f != CellFormat::kText && f != CellFormat::kBool; }

/// Whether a cell's text is kept on one line: numbers, and short single words (instance
/// types, ids, dates).
bool keep_on_one_line(const std::string& text, CellFormat format) {
  return right_aligned(format) || (text.size() < 24 && text.find(' ') == std::string::npos);
}

size_t longest_word(const std::string& text) {
  size_t longest = 0;
  std::istringstream words(text);
  for (std::string w; words >> w;) longest = std::max(longest, w.size());
  return longest;
}

}  // namespace

TableLayout layout_table(const Table& t) {
  // Per column: `need`, the width no line break can go below (the longest header word, a
  // one-line cell, the longest word of a wrapping cell up to kMaxWordChars), and `want`, its
  // longest text capped at kMaxColumnWeight; both in characters, padding added.
  const size_t n = t.columns.size();
  std::vector<double> need(n), want(n);
  for (size_t i = 0; i < n; ++i) {
    size_t min_chars = std::max(kMinColumnWeight, longest_word(t.columns[i].label));
    size_t max_chars = min_chars;
    for (const auto& row : t.rows) {
      const std::string text = format_cell(row.at(i), t.columns[i].format);
      min_chars = std::max(min_chars, keep_on_one_line(text, t.columns[i].format)
                                          ? text.size()
                                          : std::min(longest_word(text), kMaxWordChars));
      max_chars = std::max(max_chars, text.size());
    }
    need[i] = static_cast<double>(min_chars) + kCellPaddingChars;
    want[i] = std::max(
        need[i], static_cast<double>(std::min(max_chars, kMaxColumnWeight)) + kCellPaddingChars);
  }
  // Comfortable: the unbreakable widths, and for a wrapping column up to kComfortChars, so
  // that reasons and hardware names get a few words per line.
  double need_total = 0, want_total = 0, comfort_total = 0;
  for (size_t i = 0; i < n; ++i) {
    need_total += need[i];
    want_total += want[i];
    comfort_total += std::max(need[i], std::min(want[i], kComfortChars + kCellPaddingChars));
  }
  TableLayout layout;
  // A smaller font when the comfortable widths do not fit the line.
  layout.point_size = kBodyPointSize;
  double line = kLineChars;
  if (comfort_total > kLineChars) {
    layout.point_size = std::max(kMinTablePointSize, kBodyPointSize * kLineChars / comfort_total);
    line = kLineChars * kBodyPointSize / layout.point_size;
  }
  // Every column gets its need; what is left of the line goes to the columns that want more,
  // in proportion to how much more (all of it, in proportion to want, when all fit).
  std::vector<double> width(n);
  if (want_total <= line) {
    for (size_t i = 0; i < n; ++i) width[i] = want[i];
  } else {
    const double spare = std::max(0.0, line - need_total);
    const double extra = want_total - need_total;
    for (size_t i = 0; i < n; ++i) {
      width[i] = need[i] + (extra > 0 ? spare * (want[i] - need[i]) / extra : 0.0);
    }
  }
  double total = 0;
  for (double w : width) total += w;
  for (size_t i = 0; i < n; ++i) layout.width_percent.push_back(100.0 * width[i] / total);
  layout.min_chars.assign(need.begin(), need.end());
  layout.line_chars = line;
  return layout;
}

std::string write_pdf(const Report& report) {
  ensure_gui_application();

  QTextDocument doc;
  QFont font("DejaVu Sans");
  font.setPointSizeF(kBodyPointSize);
  // A letter spacing (0.05 px; 0.01 rounds to none) turns ligatures off in Qt's shaper, so
  // that "fl" and "fi" stay two letters in the PDF's text (searchable; pdftotext reads them).
  font.setLetterSpacing(QFont::AbsoluteSpacing, 0.05);
  doc.setDefaultFont(font);
  doc.setDefaultStyleSheet(
      "h1 { font-size: 16pt; } h2 { font-size: 12pt; color: #1f3b5a; } "
      "th { background-color: #e8e8e8; font-weight: bold; } "
      "p.lead { background-color: #f4f7fb; font-size: 10pt; } "
      "table { border-color: #b0b0b0; } .caption { font-weight: bold; }");

  QString html;
  html += "<h1>" + q(report.title) + "</h1>";
  int chart_index = 0;
  for (const Section& s : report.sections) {
    // The comparison starts a page: its table is the widest and should not begin in a corner.
    html += QString(s.id == "comparison" ? "<h2 style=\"page-break-before: always\">" : "<h2>") +
            q(s.title) + "</h2>";
    for (const Block& b : s.blocks) {
      if (const auto* p = std::get_if<Paragraph>(&b)) {
        html += QString("<p") +
                (s.id == "recommendation" || s.id == "answer" ? " class=\"lead\"" : "") + ">" +
                q(p->text) + "</p>";
      } else if (const auto* t = std::get_if<Table>(&b)) {
        html += "<p class=\"caption\">" + q(t->title) + "</p>";
        // Column widths from layout_table: no header word or number is broken across lines,
        // and long text columns (reasons, hardware, sources) are not squeezed to a word per
        // line; a table too wide for that gets a smaller font. A <thead> row is repeated on
        // every page the table spans.
        const TableLayout layout = layout_table(*t);
        html += QString(
                    "<table border=\"1\" cellspacing=\"0\" cellpadding=\"2\" width=\"100%\""
                    " style=\"font-size: %1pt\"><thead><tr>")
                    .arg(layout.point_size, 0, 'f', 1);
        for (size_t i = 0; i < t->columns.size(); ++i) {
          html += QString("<th width=\"%1%\">").arg(layout.width_percent[i], 0, 'f', 1) +
                  q(t->columns[i].label) + "</th>";
        }
        html += "</tr></thead><tbody>";
        for (const auto& row : t->rows) {
          html += "<tr>";
          for (size_t i = 0; i < t->columns.size(); ++i) {
            const std::string text = format_cell(row.at(i), t->columns[i].format);
            // Numbers and short single words (instance types, ids, dates) stay on one line.
            const bool nowrap = keep_on_one_line(text, t->columns[i].format);
            html += QString(right_aligned(t->columns[i].format) ? "<td align=\"right\"" : "<td") +
                    (nowrap ? " style=\"white-space: nowrap\">" : ">") + q(text) + "</td>";
          }
          html += "</tr>";
        }
        html += "</tbody></table>";
      } else {
        const Chart& c = std::get<Chart>(b);
        const std::string svg = render_svg(c, kChartWidthPx, kChartPlotHeightPx);
        QSvgRenderer renderer(QByteArray::fromStdString(svg));
        if (!renderer.isValid()) throw ReportError("pdf: chart \"" + c.id + "\": invalid SVG");
        const QSize size = renderer.defaultSize();
        QImage image(size * kImageOversample, QImage::Format_RGB32);
        image.fill(Qt::white);
        {
          QPainter painter(&image);
          painter.setRenderHint(QPainter::Antialiasing);
          renderer.render(&painter);
        }
        const QString name = QString("chart-%1.png").arg(chart_index++);
        doc.addResource(QTextDocument::ImageResource, QUrl(name), QVariant(image));
        html += QString("<p><img src=\"%1\" width=\"%2\" height=\"%3\"/></p>")
                    .arg(name)
                    .arg(size.width())
                    .arg(size.height());
      }
    }
  }
  doc.setHtml(html);

  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  {
    QPdfWriter writer(&buffer);
    writer.setTitle(QString::fromStdString(report.title));
    writer.setCreator("llmcap report");
    writer.setPageLayout(QPageLayout(QPageSize(QPageSize::A4), QPageLayout::Landscape,
                                     QMarginsF(kMarginMm, kMarginMm, kMarginMm, kMarginMm),
                                     QPageLayout::Millimeter));
    doc.print(&writer);
  }
  buffer.close();
  if (bytes.isEmpty()) throw ReportError("pdf: Qt produced no output");
  return bytes.toStdString();
}

}  // namespace llmcap::report
