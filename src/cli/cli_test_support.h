// Running the paraplan binary from the end-to-end tests.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

namespace paraplan::testing_support {

struct Outcome {
  int exit_code;
  std::string out;  ///< stdout and stderr together
};

/// Runs a shell command line, stderr merged into stdout.
inline Outcome run_shell(const std::string& command) {
  // The output tests read is the command's alone: no progress lines in it, however slow the
  // machine (a test that wants them sets the variable in its command).
  setenv("PARAPLAN_PROGRESS_EVERY_S", "0", 0);
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (std::size_t n = fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  const int status = pclose(pipe);
  return {WEXITSTATUS(status), out};
}

/// Runs `paraplan ARGS`.
inline Outcome run(const std::string& args) {
  return run_shell(std::string(PARAPLAN_BINARY) + " " + args);
}

/// Writes `text` to a file in the test's temporary directory; returns its path.
inline std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

/// The whole of a file ("" if it cannot be read).
inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// A JSON file read whole, and written (indented).
inline nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}
inline void write_json(const std::string& path, const nlohmann::json& j) {
  std::ofstream(path) << j.dump(2);
}

}  // namespace paraplan::testing_support
