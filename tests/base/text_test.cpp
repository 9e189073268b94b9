#include "base/text.h"

#include <gtest/gtest.h>

namespace llmcap::base {
namespace {

TEST(TextTest, DescribePrintsLikeAnOstream) {
  EXPECT_EQ(describe(0.1), "0.1");
  EXPECT_EQ(describe(1e-7), "1e-07");
  EXPECT_EQ(describe(2), "2");
  EXPECT_EQ(describe(1234567), "1.23457e+06");
}

TEST(TextTest, FixedRoundsToTheGivenDigits) {
  EXPECT_EQ(fixed(2.345, 1), "2.3");
  EXPECT_EQ(fixed(2, 2), "2.00");
  EXPECT_EQ(fixed(-0.5, 0), "-0");
}

TEST(TextTest, SignificantNeverUsesAnExponent) {
  EXPECT_EQ(significant(0.06134, 3), "0.0613");
  EXPECT_EQ(significant(3.5, 3), "3.5");
  EXPECT_EQ(significant(3456.7, 3), "3,457");
  EXPECT_EQ(significant(3456.7, 4), "3457");  // as %.4g
  EXPECT_EQ(significant(34567, 3), "34,567");
  EXPECT_EQ(significant(1e-7, 3), "0.0000001");
  EXPECT_EQ(significant(0, 3), "0");
  EXPECT_EQ(significant(-0.5, 3), "-0.5");
  EXPECT_EQ(gb(141107412992), "141.1 GB");
  EXPECT_EQ(gb(1073741824), "1.074 GB");
  EXPECT_EQ(gb(2.5e13), "25,000 GB");
  EXPECT_EQ(gb_per_s(3.35e12), "3350 GB/s");
  EXPECT_EQ(gb_per_s(3.84e13), "38,400 GB/s");
}

TEST(TextTest, GroupedSeparatesThousandsAndKeepsDecimals) {
  EXPECT_EQ(grouped(1234567.891, 2), "1,234,567.89");
  EXPECT_EQ(grouped(-1234, 0), "-1,234");
  EXPECT_EQ(grouped(999.999, 2), "1,000.00");
  EXPECT_EQ(grouped(12, 1), "12.0");
  EXPECT_EQ(grouped(-0.001, 2), "0.00");  // no negative zero
}

TEST(TextTest, SizedFleetCountsAGivenFleetsInstancesAfterItsGroups) {
  EXPECT_EQ(sized_fleet(3, "aws-g6e.xlarge"), "3 x aws-g6e.xlarge");
  EXPECT_EQ(sized_fleet(3, "fleet: 1 x a prefill + 2 x b decode"),
            "fleet: 1 x a prefill + 2 x b decode (3 instances)");
  EXPECT_EQ(sized_fleet(1, "fleet: 1 x a"), "fleet: 1 x a (1 instance)");
  EXPECT_TRUE(is_given_fleet_id("fleet: 1 x a"));
  EXPECT_FALSE(is_given_fleet_id("aws-fleet: x"));
}

TEST(TextTest, MoneyNamesTheCurrencyAndDropsCentsOnlyWhenAsked) {
  EXPECT_EQ(money("USD", 3.72), "USD 3.72");
  EXPECT_EQ(money("CNY", 26934.1), "CNY 26,934.10");
  EXPECT_EQ(money("USD", 32604.72, true), "USD 32,605");
  EXPECT_EQ(money("USD", 999.99, true), "USD 999.99");
}

TEST(TextTest, AsciiLowerLowersOnlyAsciiLetters) {
  EXPECT_EQ(ascii_lower("On_Demand-USD 3"), "on_demand-usd 3");
  EXPECT_EQ(ascii_lower("\xc3\x89"), "\xc3\x89");  // UTF-8 bytes unchanged
}

TEST(TextTest, PluralAddsAnSUnlessOne) {
  EXPECT_EQ(plural(1, "replica"), "1 replica");
  EXPECT_EQ(plural(0, "replica"), "0 replicas");
  EXPECT_EQ(plural(3, "replica"), "3 replicas");
}

TEST(TextTest, GigabytesUseFourSignificantDigits) {
  EXPECT_EQ(gb(141107412992.0), "141.1 GB");
  EXPECT_EQ(gb(39716622336.0), "39.72 GB");
  EXPECT_EQ(gb_per_s(3.35e12), "3350 GB/s");
}

TEST(PrintableTest, ShowsControlCharactersAsEscapes) {
  EXPECT_EQ(printable("a\x1b[31mred\x1b[0m"), "a\\x1b[31mred\\x1b[0m");
  EXPECT_EQ(printable("line\nnext\r\tx\x7f"), "line\\nnext\\r\\tx\\x7f");
  EXPECT_EQ(printable(std::string("nul\0end", 7)), "nul\\x00end");
}

TEST(PrintableTest, KeepsLineBreaksAndTabsWhenAsked) {
  EXPECT_EQ(printable("a\nb\tc\rd\x1b", true), "a\nb\tc\\rd\\x1b");
}

TEST(PrintableTest, ShowsC1ControlsAndDirectionOverridesAsUnicodeEscapes) {
  EXPECT_EQ(printable("\xc2\x9b"
                      "31m"),
            "\\u009b31m");  // C1 CSI
  EXPECT_EQ(printable("abc\xe2\x80\xae"
                      "fed"),
            "abc\\u202efed");                           // right-to-left override
  EXPECT_EQ(printable("x\xe2\x80\xa8y"), "x\\u2028y");  // line separator
}

TEST(PrintableTest, KeepsWellFormedUtf8AndEscapesEveryOtherByte) {
  EXPECT_EQ(printable("Zürich 東京 \xf0\x9f\x9a\x80"), "Zürich 東京 \xf0\x9f\x9a\x80");
  EXPECT_EQ(printable("a\xff"
                      "b"),
            "a\\xffb");
  EXPECT_EQ(printable("\xc3"), "\\xc3");                             // truncated sequence
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // beyond U+10FFFF
}

TEST(EscapeMarkdownTest, EscapesInlineMetacharacters) {
  EXPECT_EQ(escape_markdown("[x](javascript:alert(1))"), "\\[x\\](javascript:alert(1))");
  EXPECT_EQ(escape_markdown("<iframe src=x>"), "\\<iframe src=x\\>");
  EXPECT_EQ(escape_markdown("a*b_c`d|e~f&amp;#g\\h"), "a\\*b\\_c\\`d\\|e\\~f\\&amp;\\#g\\\\h");
  EXPECT_EQ(escape_markdown("plain text, 1.5 (ok)"), "plain text, 1.5 (ok)");
}

TEST(EscapeMarkdownTest, NewlinesCannotStartABlock) {
  EXPECT_EQ(escape_markdown("name\n# Injected\n"), "name\\\\n\\# Injected\\\\n");
}

TEST(EscapeMarkdownTest, EscapesALeadingBlockMarkerAtTheStartOfABlock) {
  EXPECT_EQ(escape_markdown("- item", true), "\\- item");
  EXPECT_EQ(escape_markdown("+ item", true), "\\+ item");
  EXPECT_EQ(escape_markdown("===", true), "\\===");
  EXPECT_EQ(escape_markdown("12. item", true), "12\\. item");
  EXPECT_EQ(escape_markdown("3) item", true), "3\\) item");
  EXPECT_EQ(escape_markdown("    code", true), "&#32;&#32;&#32;&#32;code");
  EXPECT_EQ(escape_markdown("a - b", true), "a - b");
}

TEST(EscapeMarkdownTest, InlineTextKeepsNumbersAndSignsAsTheyAre) {
  EXPECT_EQ(escape_markdown("-20.0%"), "-20.0%");
  EXPECT_EQ(escape_markdown("4.3%"), "4.3%");
  EXPECT_EQ(escape_markdown("  x"), "  x");
}

TEST(EscapeXmlTest, EscapesMarkupAndKeepsWhitespace) {
  EXPECT_EQ(escape_xml("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;");
  EXPECT_EQ(escape_xml("a\tb\nc\rd"), "a\tb\nc\rd");
  EXPECT_EQ(escape_xml("Zürich \xe2\x80\xae"), "Zürich \xe2\x80\xae");
}

TEST(EscapeXmlTest, WritesCharactersXmlForbidsAndInvalidUtf8AsEscapes) {
  EXPECT_EQ(escape_xml("a\x1b[0m\x01"), "a\\x1b[0m\\x01");
  EXPECT_EQ(escape_xml("\xc2\x85"), "\\u0085");
  EXPECT_EQ(escape_xml("\xef\xbf\xbe\xef\xbf\xbf"), "\\ufffe\\uffff");
  EXPECT_EQ(escape_xml("bad\xfe\xc3("), "bad\\xfe\\xc3(");
}

TEST(CsvCellTest, NeutralisesFormulaTriggersWithAQuoteAndQuotes) {
  EXPECT_EQ(csv_cell("=HYPERLINK(\"http://x\",\"y\")"),
            "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"");
  EXPECT_EQ(csv_cell("+cmd|' /C calc'!A0"), "\"'+cmd|' /C calc'!A0\"");
  EXPECT_EQ(csv_cell("-2+3"), "\"'-2+3\"");
  EXPECT_EQ(csv_cell("@SUM(A1)"), "\"'@SUM(A1)\"");
  EXPECT_EQ(csv_cell("\tx"), "\"'\tx\"");
  EXPECT_EQ(csv_cell("\rx"), "\"'\rx\"");
}

TEST(CsvCellTest, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(csv_cell("h100-80gb"), "h100-80gb");
  EXPECT_EQ(csv_cell("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_cell("a;=b"), "\"a;=b\"");
  EXPECT_EQ(csv_cell("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_cell("plain", true), "\"plain\"");
  EXPECT_EQ(csv_cell(""), "");
}

}  // namespace
}  // namespace llmcap::base
