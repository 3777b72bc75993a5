// Python as far as configuration code goes: a tokenizer (names, numbers, strings, operators,
// logical lines by bracket depth and indentation), the module's imports and functions, and an
// evaluator of one function's statements into the values it sets.
#include "engines/python_config.h"

#include <fmt/format.h>

#include <cctype>
#include <set>

#include "ir/error.h"

namespace paraplan::engines {

// The tokenizer's output (outside the anonymous namespace: PythonConfig::Impl holds lines).
struct PythonToken {
  enum class Kind { kName, kNumber, kString, kOp } kind;
  std::string text;
  int line;
};

struct PythonLine {  // a logical line
  int indent = 0;
  int line = 0;
  std::vector<PythonToken> tokens;
};

namespace {

const Json kUnknown = "?";

const std::map<std::string, std::string> kSections = {{"training", "TrainingConfig"},
                                                      {"parallelism", "ParallelismConfig"},
                                                      {"compile", "CompileConfig"}};

[[noreturn]] void fail(const std::string& source, int line, const std::string& message) {
  throw Error(ErrorKind::kUsage, fmt::format("{}:{}", source, line), message);
}

// A string literal from `i` (at its quote, after any prefix letters); `i` ends past it.
std::string read_string(const std::string& s, std::size_t& i, int& line,
                        const std::string& source) {
  const char q = s[i];
  const bool triple = s.compare(i, 3, std::string(3, q)) == 0;
  const std::string close = triple ? std::string(3, q) : std::string(1, q);
  i += close.size();
  std::string out;
  const int start = line;
  while (i < s.size() && s.compare(i, close.size(), close) != 0) {
    if (s[i] == '\n') {
      if (!triple) fail(source, start, "a string is not closed on its line");
      ++line;
    }
    if (s[i] == '\\' && i + 1 < s.size()) {
      out += s[i + 1] == 'n' ? '\n' : s[i + 1];
      i += 2;
      continue;
    }
    out += s[i++];
  }
  if (i >= s.size()) fail(source, start, "a string is not closed");
  i += close.size();
  return out;
}

std::vector<PythonLine> tokenize(const std::string& s, const std::string& source) {
  std::vector<PythonLine> lines;
  PythonLine current;
  int line = 1, depth = 0;
  bool line_start = true;
  std::size_t i = 0;
  auto finish = [&] {
    if (!current.tokens.empty()) lines.push_back(current);
    current = PythonLine{};
    line_start = true;
  };
  while (i < s.size()) {
    const char c = s[i];
    if (line_start) {  // the indentation of a new logical line
      int indent = 0;
      while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) indent += s[i++] == '\t' ? 8 : 1;
      current.indent = indent;
      current.line = line;
      line_start = false;
      continue;
    }
    if (c == '\n') {
      ++line, ++i;
      if (depth == 0) finish();
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c == '#') {
      while (i < s.size() && s[i] != '\n') ++i;
      continue;
    }
    if (c == '\\' && i + 1 < s.size() && s[i + 1] == '\n') {
      i += 2, ++line;
      continue;
    }
    const int at = line;
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      std::string word = s.substr(i, j - i);
      if (j < s.size() && (s[j] == '"' || s[j] == '\'') && word.size() <= 2 &&
          word.find_first_not_of("rRbBfFuU") == std::string::npos) {
        i = j;
        current.tokens.push_back({PythonToken::Kind::kString, read_string(s, i, line, source), at});
        continue;
      }
      current.tokens.push_back({PythonToken::Kind::kName, word, at});
      i = j;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      std::size_t j = i;
      while (j < s.size() &&
             (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '.' || s[j] == '_' ||
              ((s[j] == '+' || s[j] == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E'))))
        ++j;
      current.tokens.push_back({PythonToken::Kind::kNumber, s.substr(i, j - i), at});
      i = j;
      continue;
    }
    if (c == '"' || c == '\'') {
      current.tokens.push_back({PythonToken::Kind::kString, read_string(s, i, line, source), at});
      continue;
    }
    static const char* kOps[] = {"->", "==", "!=", "<=", ">=", "**", "//", ":="};
    std::string op(1, c);
    for (const char* two : kOps)
      if (s.compare(i, 2, two) == 0) op = two;
    if (op == "(" || op == "[" || op == "{") ++depth;
    if (op == ")" || op == "]" || op == "}") {
      if (depth == 0) fail(source, line, fmt::format("an unmatched '{}'", op));
      --depth;
    }
    if (std::string("()[]{},:.=+-*/%<>@|&~^;").find(c) == std::string::npos && op.size() == 1)
      fail(source, line, fmt::format("unexpected character '{}'", c));
    current.tokens.push_back({PythonToken::Kind::kOp, op, at});
    i += op.size();
  }
  if (depth != 0) fail(source, line, "a bracket is not closed");
  finish();
  return lines;
}

bool is_op(const PythonToken& t, const char* op) {
  return t.kind == PythonToken::Kind::kOp && t.text == op;
}
bool is_name(const PythonToken& t, const char* name) {
  return t.kind == PythonToken::Kind::kName && t.text == name;
}

// A value with the dotted name it was written as ("FullAC.Config"; "" for other expressions).
struct Val {
  Json v;
  std::string path;
};

Json default_of(const Json& object, const std::string& field) {
  if (object.is_object() && object.value("class", "") == "CompileConfig") {
    if (field == "enable") return false;
    if (field == "components") return Json::array({"model", "loss"});
  }
  return kUnknown;
}

// The configuration as objects, for expressions that read it (config.compile.enable).
Json config_view(const ConfigRows& rows) {
  Json view = {{"class", "Trainer.Config"}};
  for (const auto& [section, cls] : kSections) {
    Json obj = {{"class", cls}};
    for (const auto& [key, value] : rows)
      if (key.rfind(section + ".", 0) == 0) obj[key.substr(section.size() + 1)] = value;
    view[section] = obj;
  }
  return view;
}

}  // namespace

void assign_config_row(ConfigRows& rows, const std::string& key, const Json& value) {
  const std::string section = key.substr(0, key.find('.'));
  const auto s = kSections.find(section);
  if (s != kSections.end() && key.find('.') == std::string::npos) {  // a whole section
    for (auto it = rows.begin(); it != rows.end();)
      it = it->first.rfind(section + ".", 0) == 0 ? rows.erase(it) : std::next(it);
    if (value.is_object() && value.value("class", "") == s->second) {
      for (const auto& [k, v] : value.items())
        if (k != "class") rows[section + "." + k] = v;
    } else {
      rows[section] = kUnknown;
    }
    return;
  }
  if (section == "activation_checkpoint") {
    rows[key] = value.is_object() ? Json(value.value("class", std::string("?"))) : value;
    return;
  }
  if (section == "model_spec" || s != kSections.end()) {
    rows[key] = value;
    return;
  }
  rows[section] = "set";
}

struct PythonConfig::Impl {
  std::string source;
  std::vector<PythonLine> lines;
  std::vector<PythonFunction> functions;
  std::vector<std::pair<std::size_t, std::size_t>> bodies;  // lines of each function's body
  std::map<std::string, std::string> imports;
};

namespace {

// Expressions of one statement, evaluated as they are parsed.
class Expr {
 public:
  Expr(const std::vector<PythonToken>& tokens, std::size_t from, std::size_t to,
       const std::map<std::string, Json>& env, std::function<std::optional<Json>(const Val&)> call,
       const std::string& source)
      : t_(tokens), i_(from), end_(to), env_(env), call_(std::move(call)), source_(source) {}

  Val parse() {
    Val v = or_expr();
    if (i_ != end_) fail(source_, t_[i_].line, fmt::format("unexpected '{}'", t_[i_].text));
    return v;
  }

 private:
  bool at(const char* op) const { return i_ < end_ && is_op(t_[i_], op); }
  bool at_name(const char* n) const { return i_ < end_ && is_name(t_[i_], n); }
  const PythonToken& next() {
    if (i_ >= end_) fail(source_, t_[end_ - 1].line, "an expression ends too early");
    return t_[i_++];
  }
  void expect(const char* op) {
    if (!at(op))
      fail(source_, i_ < end_ ? t_[i_].line : t_[end_ - 1].line, fmt::format("expected '{}'", op));
    ++i_;
  }

  Val or_expr() {
    Val v = and_expr();
    while (at_name("or")) {
      ++i_;
      and_expr();
      v = {kUnknown, ""};
    }
    return v;
  }
  Val and_expr() {
    Val v = not_expr();
    while (at_name("and")) {
      ++i_;
      const Val w = not_expr();
      v.v = v.v.is_boolean() && w.v.is_boolean() ? Json(v.v.get<bool>() && w.v.get<bool>())
                                                 : kUnknown;
      v.path.clear();
    }
    return v;
  }
  Val not_expr() {
    if (at_name("not")) {
      ++i_;
      const Val v = not_expr();
      return {v.v.is_boolean() ? Json(!v.v.get<bool>()) : kUnknown, ""};
    }
    Val v = sum();
    if (at_name("in")) {
      ++i_;
      const Val w = sum();
      Json r = kUnknown;
      if (w.v.is_array() && v.v != kUnknown) {
        r = false;
        for (const Json& e : w.v)
          if (e == v.v) r = true;
      }
      return {r, ""};
    }
    if (at("==") || at("!=") || at("<") || at(">") || at("<=") || at(">=") || at_name("is")) {
      ++i_;
      if (at_name("not")) ++i_;
      sum();
      return {kUnknown, ""};
    }
    return v;
  }
  Val sum() {
    Val v = term();
    while (at("+") || at("-")) {
      const bool plus = next().text == "+";
      const Val w = term();
      v.v = v.v.is_number() && w.v.is_number()
                ? (v.v.is_number_integer() && w.v.is_number_integer()
                       ? Json(plus ? v.v.get<std::int64_t>() + w.v.get<std::int64_t>()
                                   : v.v.get<std::int64_t>() - w.v.get<std::int64_t>())
                       : Json(plus ? v.v.get<double>() + w.v.get<double>()
                                   : v.v.get<double>() - w.v.get<double>()))
                : kUnknown;
      v.path.clear();
    }
    return v;
  }
  Val term() {
    Val v = unary();
    while (at("*") || at("/") || at("//") || at("%") || at("**")) {
      const std::string op = next().text;
      const Val w = unary();
      if (op == "*" && v.v.is_number_integer() && w.v.is_number_integer())
        v.v = v.v.get<std::int64_t>() * w.v.get<std::int64_t>();
      else if (op == "*" && v.v.is_number() && w.v.is_number())
        v.v = v.v.get<double>() * w.v.get<double>();
      else
        v.v = kUnknown;
      v.path.clear();
    }
    return v;
  }
  Val unary() {
    if (at("-")) {
      ++i_;
      const Val v = unary();
      if (v.v.is_number_integer()) return {-v.v.get<std::int64_t>(), ""};
      if (v.v.is_number()) return {-v.v.get<double>(), ""};
      return {kUnknown, ""};
    }
    return postfix();
  }
  Val postfix() {
    Val v = atom();
    for (;;) {
      if (at(".")) {
        ++i_;
        const PythonToken& name = next();
        if (name.kind != PythonToken::Kind::kName)
          fail(source_, name.line, "expected a name after '.'");
        const Json member = v.v.is_object() ? (v.v.contains(name.text) ? v.v[name.text]
                                                                       : default_of(v.v, name.text))
                                            : kUnknown;
        v = {member, v.path.empty() ? "" : v.path + "." + name.text};
      } else if (at("(")) {
        v = {call(v), ""};
      } else if (at("[")) {
        ++i_;
        const Val key = or_expr();
        while (!at("]")) next();
        expect("]");
        v = {key.v.is_string() && !v.path.empty()
                 ? Json(fmt::format("{}[{}]", v.path, key.v.get<std::string>()))
                 : kUnknown,
             ""};
      } else {
        return v;
      }
    }
  }
  Json call(const Val& f) {
    expect("(");
    Json object = {{"class", f.path.empty() ? "?" : f.path}};
    int positional = 0;
    while (!at(")")) {
      if (at("*") || at("**")) {  // *args, **kwargs: not followed
        ++i_;
        or_expr();
        object["?"] = kUnknown;
      } else if (i_ + 1 < end_ && t_[i_].kind == PythonToken::Kind::kName &&
                 is_op(t_[i_ + 1], "=")) {
        const std::string key = t_[i_].text;
        i_ += 2;
        object[key] = or_expr().v;
      } else {
        const Json arg = or_expr().v;
        object[positional++ == 0 && f.path == "model_registry" ? "flavor"
                                                               : fmt::format("arg{}", positional)] =
            arg;
      }
      if (!at(")")) expect(",");
    }
    expect(")");
    if (auto other = call_(f)) return *other;
    return object;
  }
  Val atom() {
    const PythonToken& t = next();
    if (t.kind == PythonToken::Kind::kNumber) {
      std::string digits;
      for (char ch : t.text)
        if (ch != '_') digits += ch;
      try {
        if (digits.find_first_of(".eE") == std::string::npos)
          return {static_cast<std::int64_t>(std::stoll(digits, nullptr, 0)), ""};
        return {std::stod(digits), ""};
      } catch (const std::exception&) {
        return {kUnknown, ""};
      }
    }
    if (t.kind == PythonToken::Kind::kString) {
      std::string text = t.text;
      while (i_ < end_ && t_[i_].kind == PythonToken::Kind::kString) text += t_[i_++].text;
      return {text, ""};
    }
    if (t.kind == PythonToken::Kind::kName) {
      if (t.text == "True") return {true, ""};
      if (t.text == "False") return {false, ""};
      if (t.text == "None") return {nullptr, ""};
      if (t.text == "lambda") {
        while (i_ < end_ && !at(",") && !at(")")) ++i_;
        return {kUnknown, ""};
      }
      const auto it = env_.find(t.text);
      return {it != env_.end() ? it->second : kUnknown, t.text};
    }
    if (is_op(t, "(") || is_op(t, "[") || is_op(t, "{")) {
      const std::string close = t.text == "(" ? ")" : t.text == "[" ? "]" : "}";
      Json items = Json::array();
      bool unknown = t.text == "{";
      while (!at(close.c_str())) {
        items.push_back(or_expr().v);
        if (at(":")) {
          ++i_;
          or_expr();
          unknown = true;
        }
        if (at_name("for")) unknown = true;
        while (i_ < end_ && !at(",") && !at(close.c_str())) ++i_;
        if (!at(close.c_str())) expect(",");
      }
      expect(close.c_str());
      if (unknown) return {kUnknown, ""};
      if (t.text == "(" && items.size() == 1) return {items[0], ""};
      return {items, ""};
    }
    fail(source_, t.line, fmt::format("unexpected '{}'", t.text));
  }

  const std::vector<PythonToken>& t_;
  std::size_t i_, end_;
  const std::map<std::string, Json>& env_;
  std::function<std::optional<Json>(const Val&)> call_;
  const std::string& source_;
};

std::string dotted_target(const std::vector<PythonToken>& t, std::size_t end) {
  std::string out;
  for (std::size_t i = 0; i < end; ++i) {
    const bool name = t[i].kind == PythonToken::Kind::kName;
    if ((i % 2 == 0) != name || (!name && t[i].text != ".")) return "";
    out += t[i].text;
  }
  return out;
}

}  // namespace

PythonConfig::PythonConfig(const std::string& text, std::string source)
    : impl_(std::make_unique<Impl>()) {
  impl_->source = std::move(source);
  impl_->lines = tokenize(text, impl_->source);
  const auto& lines = impl_->lines;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const PythonLine& l = lines[i];
    if (l.indent > 0) continue;
    const auto& t = l.tokens;
    if (is_name(t[0], "from") && t.size() >= 4) {
      std::size_t k = 1;
      std::string module;
      while (k < t.size() && !is_name(t[k], "import")) module += t[k++].text;
      for (++k; k < t.size(); ++k) {
        if (t[k].kind != PythonToken::Kind::kName) continue;
        const std::string name = t[k].text;
        std::string local = name;
        if (k + 2 < t.size() && is_name(t[k + 1], "as")) local = t[k += 2].text;
        impl_->imports[local] = module + "." + name;
      }
    } else if (is_name(t[0], "def") && t.size() >= 2) {
      PythonFunction f{t[1].text, "", l.line};
      for (std::size_t k = 0; k + 1 < t.size(); ++k)
        if (is_op(t[k], "->"))
          for (std::size_t j = k + 1; j + 1 < t.size(); ++j) f.returns += t[j].text;
      std::size_t end = i + 1;
      while (end < lines.size() && lines[end].indent > 0) ++end;
      impl_->functions.push_back(f);
      impl_->bodies.emplace_back(i + 1, end);
    }
  }
}

PythonConfig::~PythonConfig() = default;

const std::vector<PythonFunction>& PythonConfig::functions() const { return impl_->functions; }
const std::map<std::string, std::string>& PythonConfig::imports() const { return impl_->imports; }

ConfigRows PythonConfig::rows(
    const std::string& name,
    const std::function<std::optional<ConfigRows>(const std::string&)>& outside) const {
  std::size_t index = 0;
  while (index < impl_->functions.size() && impl_->functions[index].name != name) ++index;
  if (index == impl_->functions.size())
    fail(impl_->source, 1, fmt::format("no function {} here", name));
  static thread_local std::set<std::string> active;
  if (!active.insert(name).second)
    fail(impl_->source, impl_->functions[index].line, fmt::format("{} calls itself", name));
  struct Guard {
    const std::string& n;
    ~Guard() { active.erase(n); }
  } guard{name};
  ConfigRows rows;
  std::map<std::string, Json> env;
  // A call of a configuration function: its rows as an object the caller takes whole.
  auto call = [&](const Val& f) -> std::optional<Json> {
    if (f.path.empty()) return std::nullopt;
    std::optional<ConfigRows> other;
    for (const PythonFunction& g : impl_->functions)
      if (g.name == f.path && (g.returns.empty() || g.returns == "Trainer.Config"))
        other = this->rows(f.path, outside);
    if (!other) {
      const auto imp = impl_->imports.find(f.path);
      other = outside(imp != impl_->imports.end() ? imp->second : f.path);
    }
    if (!other) return std::nullopt;
    Json rows_json = Json::object();
    for (const auto& [k, v] : *other) rows_json[k] = v;
    return Json{{"class", "Trainer.Config"}, {"rows", rows_json}};
  };
  auto take = [&](const Json& config) {
    rows.clear();
    for (const auto& [k, v] : config["rows"].items()) rows[k] = v;
  };
  const auto [from, to] = impl_->bodies[index];
  for (std::size_t i = from; i < to; ++i) {
    const PythonLine& l = impl_->lines[i];
    const auto& t = l.tokens;
    std::size_t eq = 0;
    for (std::size_t k = 0, depth = 0; k < t.size() && eq == 0; ++k) {
      if (is_op(t[k], "(") || is_op(t[k], "[") || is_op(t[k], "{")) ++depth;
      if (is_op(t[k], ")") || is_op(t[k], "]") || is_op(t[k], "}")) --depth;
      if (depth == 0 && is_op(t[k], "=")) eq = k;
    }
    auto value = [&](std::size_t at) {
      return Expr(t, at, t.size(), env, call, impl_->source).parse().v;
    };
    if (t.size() == 1 && t[0].kind == PythonToken::Kind::kString) continue;  // a docstring
    if (is_name(t[0], "pass") || is_name(t[0], "assert")) continue;
    if (is_name(t[0], "return")) {
      if (t.size() == 2 && is_name(t[1], "config")) continue;  // the configuration assigned
      const Json v = t.size() > 1 ? value(1) : kUnknown;
      if (v.is_object() && v.value("class", "") == "Trainer.Config" && v.contains("rows")) {
        take(v);
      } else if (v.is_object() && v.value("class", "") == "Trainer.Config") {
        rows.clear();
        for (const auto& [k, field] : v.items())
          if (k != "class") assign_config_row(rows, k, field);
      } else {
        rows["?"] = kUnknown;
      }
      continue;
    }
    if (eq > 0) {
      const std::string target = dotted_target(t, eq);
      if (target.empty())
        fail(impl_->source, l.line, "an assignment to something other than a name or config.X");
      const Json v = value(eq + 1);
      if (target.find('.') == std::string::npos) {
        env[target] = v;
        if (v.is_object() && v.contains("rows")) {
          if (target == "config") take(v);
          env[target] = config_view(rows);
        }
      } else if (target.rfind("config.", 0) == 0) {
        assign_config_row(rows, target.substr(7), v);
        env["config"] = config_view(rows);
      } else {
        rows["?"] = kUnknown;
      }
      continue;
    }
    static const std::set<std::string> kBlocks = {"if",  "for",    "while", "with", "try",
                                                  "def", "global", "del",   "raise"};
    if (t[0].kind == PythonToken::Kind::kName && kBlocks.count(t[0].text))
      fail(impl_->source, l.line,
           fmt::format("a statement paraplan does not follow ('{}'): it reads configuration "
                       "functions of assignments and constructor calls only",
                       t[0].text));
    // A call made for its effect on the configuration (enable_fused_swiglu(config)).
    const std::string callee = dotted_target(t, t.size() > 1 && is_op(t[1], "(") ? 1 : 0);
    rows["call " + (callee.empty() ? std::string("?") : callee)] = "set";
  }
  return rows;
}

}  // namespace paraplan::engines
