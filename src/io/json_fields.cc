// Strict JSON field access with placed error messages.
#include "io/json_fields.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace paraplan::io {

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(ErrorKind::kIo, path, "a folder, not a file: give the file inside it");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::kIo, path, "cannot open file for reading");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error(ErrorKind::kIo, path, "read error");
  return text.str();
}

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(ErrorKind::kIo, path, "cannot open file for writing");
  out << text;
  out.flush();
  if (!out) throw Error(ErrorKind::kIo, path, "write error");
}

Json parse_json_text(const std::string& text, const std::string& source) {
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    // Turn the byte offset into line:column so the user can find the spot.
    std::size_t byte = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    int line = 1, column = 1;
    for (std::size_t i = 0; i < byte; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string what = e.what();
    // nlohmann's message: "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
    auto colon = what.find(": ");
    std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
    throw Error(ErrorKind::kInput, fmt::format("{}:{}:{}", source, line, column),
                "malformed JSON (" + reason + ")");
  } catch (const Json::exception& e) {
    // e.g. a number too large for a double: "number overflow parsing '1e999'".
    std::string what = e.what();
    auto bracket = what.find("] ");
    throw Error(ErrorKind::kInput, source,
                "malformed JSON (" +
                    (bracket == std::string::npos ? what : what.substr(bracket + 2)) +
                    "); numbers must be finite");
  }
}

Json parse_json_file(const std::string& path) {
  return parse_json_text(read_text_file(path), path);
}

namespace {

// The length of the well-formed UTF-8 sequence at text[i] (RFC 3629: no overlongs, no
// surrogates, at most U+10FFFF), or 0 if there is none.
std::size_t utf8_sequence(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char low = 0x80, high = 0xBF;
  if (c >= 0xC2 && c <= 0xDF)
    n = 2;
  else if (c >= 0xE0 && c <= 0xEF)
    n = 3, low = c == 0xE0 ? 0xA0 : 0x80, high = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4)
    n = 4, low = c == 0xF0 ? 0x90 : 0x80, high = c == 0xF4 ? 0x8F : 0xBF;
  else
    return 0;
  if (i + n > text.size() || byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return n;
}

}  // namespace

bool is_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_sequence(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string utf8_or_replaced(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_sequence(text, i);
    out += n ? text.substr(i, n) : std::string_view("\xEF\xBF\xBD");
    i += n ? n : 1;
  }
  return out;
}

std::string describe(const Json& value) {
  // The replacement handler: a message about a bad value must not fail on its bytes.
  if (value.is_number_float() && !std::isfinite(value.get<double>()))  // JSON would print null
    return std::isnan(value.get<double>()) ? "NaN"
           : value.get<double>() > 0       ? "infinity"
                                           : "-infinity";
  std::string s = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (s.size() > 60) {
    std::size_t cut = 57;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80)
      --cut;  // whole characters
    s = s.substr(0, cut) + "...";
  }
  return s;
}

double checked_number(const Json& value, const std::string& place, bool strictly_positive) {
  if (!value.is_number())
    throw Error(ErrorKind::kInput, place, "must be a number, got " + describe(value));
  double x = value.get<double>();
  if (!std::isfinite(x) || x < 0 || (strictly_positive && x <= 0))
    throw Error(ErrorKind::kInput, place,
                std::string("must be a finite ") +
                    (strictly_positive ? "positive" : "non-negative") + " number, got " +
                    describe(value));
  return x;
}

JsonObject::JsonObject(const Json& value, std::string file, std::string pointer)
    : value_(value), file_(std::move(file)), pointer_(std::move(pointer)) {
  if (!value_.is_object())
    throw Error(ErrorKind::kInput, file_ + ": " + (pointer_.empty() ? "/" : pointer_),
                "must be a JSON object, got " + describe(value_));
}

std::string JsonObject::place(std::string_view key) const {
  return file_ + ": " + pointer_ + "/" + std::string(key);
}

void JsonObject::fail(std::string_view key, const std::string& message) const {
  throw Error(ErrorKind::kInput, place(key), message);
}

void JsonObject::only(std::initializer_list<std::string_view> allowed) const {
  only(std::vector<std::string_view>(allowed));
}

void JsonObject::only(const std::vector<std::string_view>& allowed) const {
  for (const auto& [key, unused] : value_.items()) {
    bool known = false;
    for (auto a : allowed) known = known || key == a;
    if (!known) {
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      fail(key, "unknown field; valid fields here are: " + list);
    }
  }
}

const Json& JsonObject::get(std::string_view key) const {
  auto it = value_.find(key);
  if (it == value_.end()) fail(key, "missing required field");
  return *it;
}

double JsonObject::number(std::string_view key) const {
  return checked_number(get(key), place(key), false);
}

double JsonObject::positive_number(std::string_view key) const {
  return checked_number(get(key), place(key), true);
}

long long JsonObject::integer(std::string_view key, long long min, long long max) const {
  const Json& v = get(key);
  bool integral = v.is_number_integer() || (v.is_number_float() && std::isfinite(v.get<double>()) &&
                                            std::floor(v.get<double>()) == v.get<double>() &&
                                            std::fabs(v.get<double>()) < 9e15);
  if (!integral) fail(key, "must be an integer, got " + describe(v));
  long long x =
      v.is_number_unsigned() && v.get<unsigned long long>() > 9000000000000000000ULL
          ? max + 1
          : (v.is_number_float() ? static_cast<long long>(v.get<double>()) : v.get<long long>());
  if (x < min || x > max)
    fail(key, fmt::format("must be an integer in [{}, {}], got {}", min, max, describe(v)));
  return x;
}

std::string JsonObject::string(std::string_view key) const {
  const Json& v = get(key);
  if (!v.is_string()) fail(key, "must be a string, got " + describe(v));
  return v.get<std::string>();
}

const Json& JsonObject::array(std::string_view key) const {
  const Json& v = get(key);
  if (!v.is_array()) fail(key, "must be an array, got " + describe(v));
  return v;
}

JsonObject JsonObject::object(std::string_view key) const {
  const Json& v = get(key);
  if (!v.is_object()) fail(key, "must be an object, got " + describe(v));
  return JsonObject(v, file_, pointer_ + "/" + std::string(key));
}

JsonObject JsonObject::element(std::string_view key, std::size_t i) const {
  const Json& a = array(key);
  return JsonObject(a.at(i), file_, pointer_ + "/" + std::string(key) + "/" + std::to_string(i));
}

}  // namespace paraplan::io
