// cli/text_layout.h: the width chosen, prose wrapped with a hanging indent, table cells cut.
#include "cli/text_layout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "base/error.h"

namespace llmcap::cli {
namespace {

using ::testing::HasSubstr;

/// Every line of `text` no wider than `width`.
void expect_fits(const std::string& text, size_t width) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) EXPECT_LE(display_width(line), width) << "\"" << line << "\"";
}

TEST(ChooseWidth, FlagThenColumnsThenTerminalThenDefault) {
  EXPECT_EQ(choose_width(72, "120", 90), 72u);
  EXPECT_EQ(choose_width(std::nullopt, "120", 90), 120u);
  EXPECT_EQ(choose_width(std::nullopt, nullptr, 90), 90u);
  EXPECT_EQ(choose_width(std::nullopt, "", std::nullopt), kDefaultWidth);
  EXPECT_EQ(choose_width(std::nullopt, nullptr, std::nullopt), 100u);
}

TEST(ChooseWidth, IgnoresAColumnsValueThatIsNotAWidth) {
  EXPECT_EQ(choose_width(std::nullopt, "wide", 90), 90u);
  EXPECT_EQ(choose_width(std::nullopt, "0", std::nullopt), kDefaultWidth);
  EXPECT_EQ(choose_width(std::nullopt, "99999999999999999999", std::nullopt), kDefaultWidth);
  EXPECT_EQ(choose_width(std::nullopt, nullptr, 20), size_t{kMinWidth});  // a tiny terminal
}

TEST(ChooseWidth, RefusesAWidthFlagOutsideItsRangeNamingIt) {
  try {
    choose_width(0, "120", 90);
    FAIL() << "expected InputError";
  } catch (const base::InputError& e) {
    EXPECT_STREQ(e.what(), "--width 0: expected a number of columns from 40 to 1000");
  }
  EXPECT_THROW(choose_width(1001, nullptr, std::nullopt), base::InputError);
  EXPECT_EQ(choose_width(40, nullptr, std::nullopt), 40u);
}

TEST(WrapLine, BreaksAtSpacesWithAHangingIndent) {
  const std::string line =
      "  why not     aws-m7i: TPOT floor at batch 1 is 0.113 s > SLO 0.05 s, and more words";
  const std::string wrapped = wrap_line(line, 40, 15);
  EXPECT_EQ(wrapped,
            "  why not     aws-m7i: TPOT floor at\n"
            "               batch 1 is 0.113 s > SLO\n"
            "               0.05 s, and more words");
  expect_fits(wrapped, 40);
}

TEST(WrapLine, LeavesALineThatFitsAsItIs) {
  EXPECT_EQ(wrap_line("a  table   row", 40, 4), "a  table   row");
}

TEST(WrapLine, CutsAWordLongerThanALine) {
  const std::string path(100, 'x');
  const std::string wrapped = wrap_line("file: " + path, 40, 4);
  expect_fits(wrapped, 40);
  std::string joined;
  for (char c : wrapped) {
    if (c == 'x') joined += c;
  }
  EXPECT_EQ(joined, path);  // nothing lost
}

TEST(FitToWidth, WrapsEveryLongLineAndKeepsTheOthers) {
  const std::string text = "short\n" + std::string(30, 'a') + " " + std::string(30, 'b') +
                           "\n  indented " + std::string(45, 'c') + "\n";
  const std::string fitted = fit_to_width(text, 40);
  expect_fits(fitted, 40);
  EXPECT_EQ(fitted, "short\n" + std::string(30, 'a') + "\n    " + std::string(30, 'b') +
                        "\n  indented\n    " + std::string(36, 'c') + "\n    " +
                        std::string(9, 'c') + "\n");
}

TEST(Ellipsize, CutsToTheWidthWithAnEllipsis) {
  EXPECT_EQ(ellipsize("NVIDIA H100 SXM", 20), "NVIDIA H100 SXM");
  EXPECT_EQ(ellipsize("NVIDIA H100 SXM", 8), "NVIDIA\xE2\x80\xA6");  // trailing space dropped
  EXPECT_EQ(display_width(ellipsize("NVIDIA H100 SXM", 8)), 7u);
  EXPECT_EQ(display_width(ellipsize("\xE4\xB8\xAD\xE6\x96\x87\xE5\x90\x8D", 2)), 2u);
}

TEST(FormatTable, NarrowsTheFlexibleColumnsInTheirOrder) {
  const std::vector<std::vector<std::string>> rows = {{std::string(20, 'i'), std::string(30, 'f')}};
  EXPECT_EQ(format_table(rows, {false, false}, {1, 0}, 40),
            std::string(20, 'i') + "  " + std::string(17, 'f') + "\xE2\x80\xA6\n");
  EXPECT_EQ(format_table(rows, {false, false}, {1, 0}, 20),
            std::string(9, 'i') + "\xE2\x80\xA6  " + std::string(7, 'f') + "\xE2\x80\xA6\n");
}

TEST(FirstClause, DropsTheNamePrefixAndKeepsTheFirstClause) {
  EXPECT_EQ(first_clause("model \"llama\" on instance \"c7i\": weights need 141.1 GB (bf16), "
                         "instance has 123.7 GB usable (0.9 x 137.4 GB) and keeps 1.074 GB"),
            "weights need 141.1 GB (bf16)");
  EXPECT_EQ(first_clause("SLO not met with 64 instances (the largest size tried: a, b): p99 "
                         "TTFT 3.1 s; p99 TPOT 0.2 s"),
            "SLO not met with 64 instances (the largest size tried: a, b): p99 TTFT 3.1 s");
  EXPECT_EQ(first_clause("TPOT floor at batch 1 is 0.113 s > SLO 0.05 s"),
            "TPOT floor at batch 1 is 0.113 s > SLO 0.05 s");
}

TEST(FormatTable, NarrowsTheFlexibleColumnToFitTheWidth) {
  const std::string table = format_table({{"id", "hardware", "USD/hour"},
                                          {"aws-p5.48xlarge", std::string(60, 'h'), "98.32"},
                                          {"c7i", "Intel Xeon", "1.43"}},
                                         {false, false, true}, {1}, 50);
  expect_fits(table, 50);
  EXPECT_THAT(table, HasSubstr("aws-p5.48xlarge  hhh"));
  EXPECT_THAT(table, HasSubstr("\xE2\x80\xA6     98.32\n"));  // right-aligned under USD/hour
  EXPECT_THAT(table, HasSubstr("\nc7i              Intel Xeon"));
}

}  // namespace
}  // namespace llmcap::cli
