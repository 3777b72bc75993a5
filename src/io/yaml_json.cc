#include "io/yaml_json.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace paraplan::io {
namespace {

Json scalar(const YAML::Node& node, const std::string& source) {
  const std::string& text = node.Scalar();
  if (!is_utf8(text))  // as in JSON, where the parser refuses it
    throw Error(ErrorKind::kInput, source + ":" + std::to_string(node.Mark().line + 1),
                "text that is not valid UTF-8");
  if (node.Tag() == "!") return text;  // quoted: always a string
  if (text == "true" || text == "True") return true;
  if (text == "false" || text == "False") return false;
  if (text.empty() || text == "~" || text == "null") return nullptr;
  // YAML 1.2's core schema: decimal numbers, and .nan / .inf for the special values (which the
  // readers then refuse with "must be a finite number"); strtod's "nan", "inf" or hex are text.
  if (text == ".nan" || text == ".NaN" || text == ".NAN")
    return std::numeric_limits<double>::quiet_NaN();
  if (text == ".inf" || text == "+.inf" || text == ".Inf" || text == "+.Inf")
    return std::numeric_limits<double>::infinity();
  if (text == "-.inf" || text == "-.Inf") return -std::numeric_limits<double>::infinity();
  if (text.find_first_not_of("0123456789+-.eE") != std::string::npos) return text;
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  const long long integer = std::strtoll(begin, &end, 10);
  if (errno == 0 && end == begin + text.size()) return integer;
  errno = 0;
  const double number = std::strtod(begin, &end);
  if (errno == 0 && end == begin + text.size()) return number;
  return text;
}

Json convert(const YAML::Node& node, const std::string& source) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar:
      return scalar(node, source);
    case YAML::NodeType::Sequence: {
      Json out = Json::array();
      for (const auto& item : node) out.push_back(convert(item, source));
      return out;
    }
    case YAML::NodeType::Map: {
      Json out = Json::object();
      for (const auto& item : node) {
        if (!item.first.IsScalar())
          throw Error(ErrorKind::kInput, source + ":" + std::to_string(item.first.Mark().line + 1),
                      "mapping keys must be plain scalars");
        if (!is_utf8(item.first.Scalar()))
          throw Error(ErrorKind::kInput, source + ":" + std::to_string(item.first.Mark().line + 1),
                      "a mapping key that is not valid UTF-8");
        out[item.first.Scalar()] = convert(item.second, source);
      }
      return out;
    }
  }
  return nullptr;
}

}  // namespace

Json parse_yaml_text(const std::string& text, const std::string& source) {
  try {
    return convert(YAML::Load(text), source);
  } catch (const YAML::Exception& e) {
    // A tab in a line's indentation is the usual cause, whatever yaml-cpp calls it.
    std::istringstream lines(text);
    int number = 0;
    for (std::string line; std::getline(lines, line);) {
      ++number;
      const std::size_t indent = line.find_first_not_of(" \t");
      if (indent != std::string::npos && line.find('\t') < indent)
        throw Error(ErrorKind::kInput, source + ":" + std::to_string(number),
                    "a tab in the indentation; YAML indents with spaces only");
    }
    throw Error(
        ErrorKind::kInput,
        source + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1),
        "YAML syntax error: " + e.msg);
  }
}

Json parse_json_or_yaml_file(const std::string& path) {
  auto ends_with = [&](const std::string& suffix) {
    return path.size() >= suffix.size() &&
           path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".yaml") || ends_with(".yml")) return parse_yaml_text(read_text_file(path), path);
  return parse_json_file(path);
}

}  // namespace paraplan::io
