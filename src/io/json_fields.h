// Strict access to JSON documents: every failure names the file and the JSON pointer of the field,
// says what is wrong and what would be valid.
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "ir/error.h"

namespace paraplan::io {

using Json = nlohmann::json;

/// Reads and parses a JSON file; syntax errors name the line and column.
Json parse_json_file(const std::string& path);
/// Parses JSON text that came from `source` (a file name used in messages).
Json parse_json_text(const std::string& text, const std::string& source);
/// Reads a whole file; Error(kIo) if it cannot be opened.
std::string read_text_file(const std::string& path);
/// Writes (replaces) a whole file; Error(kIo) if it cannot be opened or written.
void write_text_file(const std::string& path, const std::string& text);

/// A view of one JSON object at a pointer inside a file.
class JsonObject {
 public:
  JsonObject(const Json& value, std::string file, std::string pointer);

  const Json& json() const { return value_; }
  const std::string& pointer() const { return pointer_; }
  bool has(std::string_view key) const { return value_.contains(key); }
  /// Fails on any key not in `allowed`.
  void only(std::initializer_list<std::string_view> allowed) const;
  void only(const std::vector<std::string_view>& allowed) const;

  double number(std::string_view key) const;           ///< finite, >= 0
  double positive_number(std::string_view key) const;  ///< finite, > 0
  long long integer(std::string_view key, long long min, long long max) const;
  std::string string(std::string_view key) const;
  const Json& array(std::string_view key) const;
  JsonObject object(std::string_view key) const;
  JsonObject element(std::string_view key, std::size_t i) const;  ///< array element as object
  /// A required field of any type (fails naming it when missing).
  const Json& field(std::string_view key) const { return get(key); }

  std::string place(std::string_view key) const;
  [[noreturn]] void fail(std::string_view key, const std::string& message) const;

 private:
  const Json& get(std::string_view key) const;
  const Json& value_;
  std::string file_;
  std::string pointer_;
};

/// Checks that `value` is a finite number >= 0 (or > 0); fails with the given place otherwise.
double checked_number(const Json& value, const std::string& place, bool strictly_positive);
std::string describe(const Json& value);
/// Whether `text` is well-formed UTF-8 (what JSON strings must be).
bool is_utf8(std::string_view text);
/// `text` with every byte that is not part of a well-formed UTF-8 sequence replaced by U+FFFD
/// (for names read from formats that do not promise UTF-8: profiles, ONNX protobufs).
std::string utf8_or_replaced(std::string_view text);

}  // namespace paraplan::io
