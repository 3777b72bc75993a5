// The build compiles each target's files in batches (CMake's unity build, PARAPLAN_UNITY): a
// name private to one file (its anonymous namespace) meets the names of the other files of its
// batch, and which files share a batch changes as files are added. So no two files of one target
// may define the same file-private name at namespace scope — checked here for every pair, not only
// for the pairs today's batches happen to hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// The target a source file compiles into: every *_test.cc into the one test binary, the files of
// src/ROOM into ROOM's library (src/cli: the executable); bench/, python/ and each fuzz target are
// one file each with code of their own.
std::string target_of(const fs::path& relative) {
  const std::string name = relative.filename().string();
  if (name.size() > 8 && name.compare(name.size() - 8, 8, "_test.cc") == 0) return "tests";
  auto part = relative.begin();
  const std::string top = (part++)->string();
  if (top == "src" && part != relative.end()) return "src/" + part->string();
  return relative.string();
}

// Names a line at column 0 inside an anonymous namespace defines: types, aliases, functions and
// variables (a heuristic on this project's formatting: clang-format puts every one of them at
// column 0 of its namespace).
std::string defined_name(const std::string& line) {
  static const std::regex type(R"(^(?:struct|class|union|enum(?: class)?)\s+(\w+)\s*[{:])");
  static const std::regex alias(R"(^using\s+(\w+)\s*=)");
  static const std::regex entity(
      R"(^(?:\[\[\w+\]\]\s*)?(?:(?:static|inline|constexpr|const)\s+)*[\w:<>,\s*&]+?[\s*&](\w+)\s*[(={\[])");
  if (line.rfind("namespace ", 0) == 0) return "";  // an alias may be repeated
  std::smatch m;
  for (const std::regex* r : {&type, &alias, &entity})
    if (std::regex_search(line, m, *r)) return m[1] == "operator" ? "" : m[1].str();
  return "";
}

std::set<std::string> file_private_names(const fs::path& file) {
  std::set<std::string> names;
  std::ifstream in(file);
  int anonymous = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("namespace {", 0) == 0) {
      ++anonymous;
    } else if (anonymous > 0 && line == "}  // namespace") {
      --anonymous;
    } else if (anonymous > 0 && !line.empty() &&
               std::string(" \t#/}").find(line[0]) == std::string::npos &&
               line.rfind("TEST", 0) != 0 && line.rfind("RC_", 0) != 0) {
      if (std::string name = defined_name(line); !name.empty()) names.insert(name);
    }
  }
  return names;
}

TEST(UnityBuild, NoTwoFilesOfATargetDefineTheSamePrivateName) {
  // The commands' `run` overloads differ in their arguments' types, so they never collide.
  const std::set<std::string> overloads = {"run"};
  const fs::path root = PARAPLAN_SOURCE_DIR;
  std::map<std::string, std::map<std::string, std::vector<std::string>>> where;  // target, name
  std::size_t files = 0;
  for (const char* folder : {"src", "tests", "bench", "python", "fuzz"}) {
    if (!fs::exists(root / folder)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
      if (!entry.is_regular_file() || entry.path().extension() != ".cc") continue;
      const fs::path relative = fs::relative(entry.path(), root);
      if (relative.begin()->string() == "tests" &&
          relative.string().find("/data/") != std::string::npos)
        continue;
      ++files;
      for (const std::string& name : file_private_names(entry.path()))
        if (!overloads.count(name)) where[target_of(relative)][name].push_back(relative.string());
    }
  }
  EXPECT_GT(files, 100u) << "the source tree was not found at " << root;
  std::vector<std::string> clashes;
  for (auto& [target, names] : where)
    for (auto& [name, in] : names)
      if (in.size() > 1) {
        std::sort(in.begin(), in.end());
        clashes.push_back(target + ": " + name + " in " + ::testing::PrintToString(in));
      }
  EXPECT_TRUE(clashes.empty()) << "rename all but one (each file's name its own):\n"
                               << ::testing::PrintToString(clashes);
}

// The checker sees what it must: a clash it would miss is no check.
TEST(UnityBuild, TheNameCheckerSeesEveryKindOfDefinition) {
  EXPECT_EQ(defined_name("struct Case {"), "Case");
  EXPECT_EQ(defined_name("enum class Kind { kA };"), "Kind");
  EXPECT_EQ(defined_name("using Rows = std::vector<int>;"), "Rows");
  EXPECT_EQ(defined_name("const std::string kDapple = std::string(PARAPLAN_DATA);"), "kDapple");
  EXPECT_EQ(defined_name("std::vector<std::string> split(const std::string& s) {"), "split");
  EXPECT_EQ(defined_name("[[noreturn]] void bad(const std::string& message) {"), "bad");
  EXPECT_EQ(defined_name("constexpr int kLimit = 4;"), "kLimit");
  EXPECT_EQ(defined_name("std::pair<double, double> score(const Plan& p) {"), "score");
  EXPECT_EQ(defined_name("namespace fs = std::filesystem;"), "");
  EXPECT_EQ(defined_name("bool operator<(const A& a, const A& b) {"), "");
  EXPECT_EQ(target_of("src/io/mpt_reader.cc"), "src/io");
  EXPECT_EQ(target_of("src/io/mpt_reader_test.cc"), "tests");
  EXPECT_EQ(target_of("tests/standalone_test.cc"), "tests");
  EXPECT_EQ(target_of("fuzz/fuzz_piper.cc"), "fuzz/fuzz_piper.cc");
}

}  // namespace
