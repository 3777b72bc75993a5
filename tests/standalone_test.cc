// The project stands alone: no file of the source tree may point outside it to the developers'
// shared reference folder, which a user's clone does not have.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

bool is_build_dir(const fs::path& dir) {
  return fs::exists(dir / "CMakeCache.txt") || dir.filename() == ".git";
}

TEST(Standalone, NoFileRefersToTheSharedFolderBesideTheCheckout) {
  const std::string needle = std::string("..") + "/shared";  // split so this file passes
  std::vector<std::string> offenders;
  const fs::path root = PARAPLAN_SOURCE_DIR;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    if (it->is_directory()) {
      if (is_build_dir(it->path())) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file()) continue;
    std::ifstream in(it->path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (text.str().find(needle) != std::string::npos)
      offenders.push_back(fs::relative(it->path(), root).string());
  }
  EXPECT_TRUE(offenders.empty()) << "files that refer to " << needle << ": "
                                 << ::testing::PrintToString(offenders);
}

TEST(Standalone, EveryDataFolderNamesItsSourceAndCarriesItsLicence) {
  const fs::path data = fs::path(PARAPLAN_SOURCE_DIR) / "data";
  for (const char* set : {"piper", "dapple", "pase", "vtrain", "mpt"}) {
    EXPECT_TRUE(fs::exists(data / set / "SOURCE.md")) << set;
  }
  for (const char* set : {"piper", "dapple", "vtrain", "mpt"}) {
    EXPECT_TRUE(fs::exists(data / set / "LICENSE")) << set;
  }
}

}  // namespace
