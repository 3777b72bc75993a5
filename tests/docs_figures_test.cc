// The figures the documentation prints are the ones the commands print
// (tests/data/docs_figures.tsv): each figure as the document writes it must be in the document, and
// as the command prints it in the command's output. Whitespace runs (a table's or a wrapped line's)
// count as one space.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_test_support.h"

namespace {

using paraplan::testing_support::read_text;
using paraplan::testing_support::run_shell;

std::string squeezed(const std::string& text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    const bool blank = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (blank && !space && !out.empty()) out += ' ';
    space = blank;
    if (!blank) out += c;
  }
  return out;
}

struct Figure {
  std::string document, written, command, printed;
  int line = 0;
};

std::vector<Figure> figures() {
  std::ifstream in(std::string(PARAPLAN_TEST_DATA) + "/docs_figures.tsv");
  std::vector<Figure> out;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    Figure f;
    f.line = number;
    std::getline(fields, f.document, '\t');
    std::getline(fields, f.written, '\t');
    std::getline(fields, f.command, '\t');
    std::getline(fields, f.printed);
    out.push_back(f);
  }
  return out;
}

TEST(DocsFigures, EachIsWhatItsCommandPrints) {
  const std::vector<Figure> all = figures();
  ASSERT_GE(all.size(), 10u) << "tests/data/docs_figures.tsv was not read";
  std::map<std::string, std::string> outputs;  // each command run once
  for (const Figure& f : all) {
    const std::string document =
        squeezed(read_text(std::string(PARAPLAN_SOURCE_DIR) + "/" + f.document));
    EXPECT_NE(document.find(squeezed(f.written)), std::string::npos)
        << "docs_figures.tsv:" << f.line << ": " << f.document << " no longer says\n  "
        << f.written;
    if (!outputs.count(f.command))
      outputs[f.command] = squeezed(run_shell("cd " + std::string(PARAPLAN_SOURCE_DIR) + " && " +
                                              PARAPLAN_BINARY + " " + f.command)
                                        .out);
    EXPECT_NE(outputs[f.command].find(squeezed(f.printed)), std::string::npos)
        << "docs_figures.tsv:" << f.line << ": `paraplan " << f.command << "` no longer prints\n  "
        << f.printed << "\n(update " << f.document << " and the table)";
  }
}

}  // namespace
