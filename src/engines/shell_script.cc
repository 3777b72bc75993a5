#include "engines/shell_script.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>

#include "ir/error.h"

namespace paraplan::engines {

std::string unquoted(std::string s) {
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front())
    return s.substr(1, s.size() - 2);
  return s;
}

namespace {

// A word as written: its parts, each bare, in double quotes or in single quotes (expansions and
// word splitting depend on which).
struct Part {
  enum class Kind { kBare, kDouble, kSingle } kind;
  std::string text;
};
struct RawWord {
  std::vector<Part> parts;
  int line = 1;
  /// The word as plain text when it is one bare part (keywords, assignments), else "".
  std::string bare() const {
    return parts.size() == 1 && parts[0].kind == Part::Kind::kBare ? parts[0].text : "";
  }
};
struct Token {
  enum class Kind { kWord, kEnd, kOpen, kClose, kRedirect, kHereDocument } kind;
  RawWord word;
};

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// NAME= or NAME+= at the start of `w`: the name's length and whether it appends; 0 if none.
std::pair<std::size_t, bool> assignment_of(const std::string& w) {
  std::size_t n = 0;
  while (n < w.size() && is_name_char(w[n])) ++n;
  if (n == 0 || std::isdigit(static_cast<unsigned char>(w[0]))) return {0, false};
  if (n < w.size() && w[n] == '=') return {n, false};
  if (n + 1 < w.size() && w[n] == '+' && w[n + 1] == '=') return {n, true};
  return {0, false};
}

// The index just past the construct opened at `i` ("$(", "${"), nested ones and quotes inside.
std::size_t past_balanced(const std::string& s, std::size_t i) {
  const char open = s[i + 1], close = open == '(' ? ')' : '}';
  int depth = 0;
  for (std::size_t j = i + 1; j < s.size(); ++j) {
    if (s[j] == '\'' || s[j] == '"') {
      const char q = s[j];
      for (++j; j < s.size() && s[j] != q; ++j)
        if (s[j] == '\\' && q == '"') ++j;
      continue;
    }
    if (s[j] == open) ++depth;
    if (s[j] == close && --depth == 0) return j + 1;
  }
  return std::string::npos;
}

class Lexer {
 public:
  Lexer(const std::string& text, const std::string& source) : s_(text), source_(source) {}

  std::vector<Token> tokens() {
    for (i_ = 0; i_ < s_.size(); ++i_) step();
    finish();
    if (!pending_.empty()) unclosed_here_document();
    return out_;
  }

 private:
  [[noreturn]] void fail(int line, const std::string& message) const {
    throw Error(ErrorKind::kUsage, fmt::format("{}:{}", source_, line), message);
  }
  void start() {
    if (!in_word_) word_ = RawWord{{}, line_};
    in_word_ = true;
  }
  void add(Part::Kind kind, const std::string& text) {
    start();
    if (!word_.parts.empty() && word_.parts.back().kind == kind && kind == Part::Kind::kBare)
      word_.parts.back().text += text;
    else
      word_.parts.push_back({kind, text});
  }
  void finish() {
    if (!in_word_) return;
    in_word_ = false;
    if (drop_next_) {  // a redirection's target: no word of the command
      drop_next_ = false;
      out_.push_back({Token::Kind::kRedirect, word_});
      return;
    }
    out_.push_back({Token::Kind::kWord, word_});
  }
  void end_command() {
    finish();
    out_.push_back({Token::Kind::kEnd, {{}, line_}});
  }
  void newline() {
    finish();
    const int line = line_++;
    // Each here-document opened on this line: its text (expanded when its marker is not
    // quoted), part of the command it feeds.
    for (const auto& [marker, opened, quoted] : pending_)
      out_.push_back({Token::Kind::kHereDocument,
                      {{{quoted ? Part::Kind::kSingle : Part::Kind::kDouble,
                         read_here_document(marker, opened)}},
                       opened}});
    pending_.clear();
    out_.push_back({Token::Kind::kEnd, {{}, line}});
  }
  std::string read_here_document(const std::string& marker, int opened) {
    // The lines after the one that opened it, up to the marker's own line.
    std::string text;
    while (i_ + 1 < s_.size()) {
      const std::size_t from = i_ + 1, to = std::min(s_.find('\n', from), s_.size());
      std::string l = s_.substr(from, to - from);
      i_ = to;
      ++line_;
      std::string trimmed = l;
      trimmed.erase(0, trimmed.find_first_not_of(" \t"));
      if (!trimmed.empty() && trimmed.back() == '\r') trimmed.pop_back();
      if (trimmed == marker) return text;
      text += l + "\n";
    }
    fail(opened, fmt::format("the here-document is not closed by a line \"{}\"", marker));
  }
  [[noreturn]] void unclosed_here_document() const {
    fail(std::get<1>(pending_.front()),
         fmt::format("the here-document is not closed by a line \"{}\"",
                     std::get<0>(pending_.front())));
  }
  void here_document() {  // at "<<": its marker, read after this line
    std::size_t j = i_ + 2;
    if (j < s_.size() && s_[j] == '-') ++j;
    while (j < s_.size() && (s_[j] == ' ' || s_[j] == '\t')) ++j;
    std::string marker;
    bool quoted = false;
    for (; j < s_.size() && !std::isspace(static_cast<unsigned char>(s_[j])) && s_[j] != ';'; ++j)
      if (s_[j] != '\'' && s_[j] != '"')
        marker += s_[j];
      else
        quoted = true;
    pending_.push_back({marker, line_, quoted});
    i_ = j - 1;
  }
  void quoted(char q) {
    const int opened = line_;
    std::string text;
    std::size_t j = i_ + 1;
    for (; j < s_.size() && s_[j] != q; ++j) {
      if (q == '"' && s_[j] == '\\' && j + 1 < s_.size()) text += s_[j++];
      if (q == '"' && s_[j] == '$' && j + 1 < s_.size() && (s_[j + 1] == '(' || s_[j + 1] == '{')) {
        const std::size_t end = past_balanced(s_, j);
        if (end == std::string::npos) fail(opened, "unclosed $( or ${");
        line_ += static_cast<int>(std::count(s_.begin() + j, s_.begin() + end, '\n'));
        text += s_.substr(j, end - j);
        j = end - 1;
        continue;
      }
      if (s_[j] == '\n') ++line_;
      text += s_[j];
    }
    if (j >= s_.size()) fail(opened, "unclosed quote");
    add(q == '"' ? Part::Kind::kDouble : Part::Kind::kSingle, text);
    i_ = j;
  }
  void redirection() {  // ">", ">>", "2>&1", "<": the operator and its target are no words
    if (in_word_ && std::all_of(word_.parts.begin(), word_.parts.end(), [](const Part& p) {
          return p.kind == Part::Kind::kBare &&
                 std::all_of(p.text.begin(), p.text.end(),
                             [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
        }))
      in_word_ = false;  // a file descriptor
    finish();
    while (i_ + 1 < s_.size() && (s_[i_ + 1] == '>' || s_[i_ + 1] == '&')) ++i_;
    drop_next_ = true;
  }
  void step() {
    const char c = s_[i_];
    const char next = i_ + 1 < s_.size() ? s_[i_ + 1] : '\0';
    if (c == '\\' && (next == '\n' || next == '\r')) {  // a continuation
      i_ += next == '\r' && i_ + 2 < s_.size() && s_[i_ + 2] == '\n' ? 2 : 1;
      ++line_;
    } else if (c == '\\' && next) {
      add(Part::Kind::kBare, std::string(1, next));
      ++i_;
    } else if (c == '#' && !in_word_) {
      while (i_ + 1 < s_.size() && s_[i_ + 1] != '\n') ++i_;
    } else if (c == '\n') {
      newline();
    } else if (c == ' ' || c == '\t' || c == '\r') {
      finish();
    } else if (c == ';' || (c == '|' && next != '|') || (c == '&' && next != '&')) {
      end_command();
    } else if ((c == '&' || c == '|') && next == c) {
      finish();
      out_.push_back({Token::Kind::kWord, {{{Part::Kind::kBare, std::string(2, c)}}, line_}});
      ++i_;
    } else if (c == '<' && next == '<') {
      finish();
      here_document();
    } else if (c == '>' || c == '<') {
      redirection();
    } else if (c == '(') {
      finish();
      out_.push_back({Token::Kind::kOpen, {{}, line_}});
    } else if (c == ')') {
      finish();
      out_.push_back({Token::Kind::kClose, {{}, line_}});
    } else if (c == '\'' || c == '"') {
      quoted(c);
    } else if (c == '$' && (next == '(' || next == '{')) {
      const std::size_t end = past_balanced(s_, i_);
      if (end == std::string::npos) fail(line_, "unclosed $( or ${");
      add(Part::Kind::kBare, s_.substr(i_, end - i_));
      i_ = end - 1;
    } else {
      add(Part::Kind::kBare, std::string(1, c));
    }
  }

  const std::string& s_;
  const std::string& source_;
  std::size_t i_ = 0;
  int line_ = 1;
  bool in_word_ = false, drop_next_ = false;
  RawWord word_;
  std::vector<Token> out_;
  // Here-documents opened on this line: marker, line, quoted.
  std::vector<std::tuple<std::string, int, bool>> pending_;
};

// Integer arithmetic of $(( )): + - * / % and parentheses; nullopt for anything else.
class Arithmetic {
 public:
  explicit Arithmetic(std::string s) : s_(std::move(s)) {}
  std::optional<std::int64_t> value() {
    const auto v = sum();
    skip();
    return v && i_ == s_.size() ? v : std::nullopt;
  }

 private:
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  std::optional<std::int64_t> sum() {
    auto v = product();
    for (skip(); v && i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-'); skip()) {
      const char op = s_[i_++];
      const auto r = product();
      if (!r) return std::nullopt;
      v = op == '+' ? *v + *r : *v - *r;
    }
    return v;
  }
  std::optional<std::int64_t> product() {
    auto v = atom();
    for (skip(); v && i_ < s_.size() && (s_[i_] == '*' || s_[i_] == '/' || s_[i_] == '%'); skip()) {
      const char op = s_[i_++];
      const auto r = atom();
      if (!r || (op != '*' && *r == 0)) return std::nullopt;
      v = op == '*' ? *v * *r : op == '/' ? *v / *r : *v % *r;
    }
    return v;
  }
  std::optional<std::int64_t> atom() {
    skip();
    if (i_ < s_.size() && s_[i_] == '(') {
      ++i_;
      const auto v = sum();
      skip();
      if (!v || i_ >= s_.size() || s_[i_] != ')') return std::nullopt;
      ++i_;
      return v;
    }
    if (i_ < s_.size() && s_[i_] == '-') {
      ++i_;
      const auto v = atom();
      return v ? std::optional(-*v) : std::nullopt;
    }
    std::size_t j = i_;
    while (j < s_.size() && std::isdigit(static_cast<unsigned char>(s_[j]))) ++j;
    if (j == i_ || j - i_ > 15) return std::nullopt;
    const std::int64_t v = std::stoll(s_.substr(i_, j - i_));
    i_ = j;
    return v;
  }
  std::string s_;
  std::size_t i_ = 0;
};

using Variables = std::map<std::string, std::vector<std::string>>;

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : " ") + x;
  return out;
}

class Expander {
 public:
  explicit Expander(const Variables& vars) : vars_(vars) {}

  // One string: every expansion this reader knows; what it does not stays as written.
  std::string text(const std::string& s) const {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == '$' || s[i + 1] == '"')) {
        out += s[++i];
        continue;
      }
      if (s[i] != '$' || i + 1 >= s.size()) {
        out += s[i];
        continue;
      }
      if (s[i + 1] == '(' || s[i + 1] == '{') {
        const std::size_t end = past_balanced(s, i);
        if (end == std::string::npos) {
          out += s.substr(i);
          break;
        }
        out += construct(s.substr(i, end - i));
        i = end - 1;
        continue;
      }
      std::size_t j = i + 1;
      if (std::isdigit(static_cast<unsigned char>(s[j])))
        ++j;
      else
        while (j < s.size() && is_name_char(s[j])) ++j;
      const std::string name = s.substr(i + 1, j - i - 1);
      const auto it = vars_.find(name);
      out += name.empty() || it == vars_.end() ? s.substr(i, j - i) : joined(it->second);
      i = j - 1;
    }
    return out;
  }

  // A word's fields: bare expansions split on blanks, quoted ones kept whole, "${A[@]}" one
  // field per element.
  std::vector<std::string> fields(const RawWord& w) const {
    std::vector<std::string> out;
    std::string current;
    bool have = false;
    for (const Part& p : w.parts) {
      if (p.kind == Part::Kind::kSingle) {
        current += p.text;
        have = true;
      } else if (p.kind == Part::Kind::kDouble) {
        const auto elements = whole_array(p.text);
        if (!elements) {
          current += text(p.text);
          have = true;
          continue;
        }
        for (std::size_t k = 0; k < elements->size(); ++k) {
          if (k > 0) {
            out.push_back(current);
            current.clear();
          }
          current += (*elements)[k];
          have = true;
        }
      } else {
        const std::string expanded = text(p.text);
        for (char c : expanded) {
          if (c == ' ' || c == '\t' || c == '\n') {
            if (have) out.push_back(current);
            current.clear();
            have = false;
          } else {
            current += c;
            have = true;
          }
        }
      }
    }
    if (have) out.push_back(current);
    return out;
  }

 private:
  // "${NAME[@]}" alone in double quotes: the array's elements.
  std::optional<std::vector<std::string>> whole_array(const std::string& s) const {
    if (s.size() < 7 || s.rfind("${", 0) != 0 || s.back() != '}') return std::nullopt;
    const std::string inner = s.substr(2, s.size() - 3);
    const std::size_t bracket = inner.find("[@]");
    if (bracket == std::string::npos || bracket + 3 != inner.size()) return std::nullopt;
    const auto it = vars_.find(inner.substr(0, bracket));
    if (it == vars_.end()) return std::nullopt;
    return it->second;
  }
  // $((...)), $(...) or ${...}.
  std::string construct(const std::string& c) const {
    if (c.rfind("$((", 0) == 0 && c.size() >= 5 && c.compare(c.size() - 2, 2, "))") == 0) {
      std::string inner = text(c.substr(3, c.size() - 5));
      // Names without $ inside arithmetic are variables too.
      std::string resolved;
      for (std::size_t i = 0; i < inner.size();) {
        if (std::isalpha(static_cast<unsigned char>(inner[i])) || inner[i] == '_') {
          std::size_t j = i;
          while (j < inner.size() && is_name_char(inner[j])) ++j;
          const auto it = vars_.find(inner.substr(i, j - i));
          resolved += it == vars_.end() ? inner.substr(i, j - i) : joined(it->second);
          i = j;
        } else {
          resolved += inner[i++];
        }
      }
      if (const auto v = Arithmetic(resolved).value()) return std::to_string(*v);
      return c;
    }
    if (c[1] == '(') return c;  // a command's output: not known here
    const std::string inner = c.substr(2, c.size() - 3);
    std::size_t n = 0;
    while (n < inner.size() && is_name_char(inner[n])) ++n;
    const std::string name = inner.substr(0, n);
    std::string rest = inner.substr(n), index;
    if (rest.rfind('[', 0) == 0) {
      const std::size_t close = rest.find(']');
      if (close == std::string::npos) return c;
      index = rest.substr(1, close - 1);
      rest = rest.substr(close + 1);
    }
    const auto it = vars_.find(name);
    const bool set = it != vars_.end();
    const bool empty = !set || joined(it->second).empty();
    for (const char* op : {":-", ":=", "-", "="}) {
      if (rest.rfind(op, 0) != 0) continue;
      const bool use_default = op[0] == ':' ? empty : !set;
      if (!use_default) break;
      return text(unquoted(rest.substr(std::string(op).size())));
    }
    if (!rest.empty() && rest.rfind(":-", 0) != 0 && rest.rfind(":=", 0) != 0 &&
        rest.rfind('-', 0) != 0 && rest.rfind('=', 0) != 0)
      return c;  // ${#A}, ${A/x/y}, ...: not read
    if (!set || name.empty()) return c;
    if (index.empty() || index == "@" || index == "*")
      return index.empty() && !it->second.empty() ? it->second.front() : joined(it->second);
    if (!std::all_of(index.begin(), index.end(),
                     [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); }) ||
        index.size() > 6)
      return c;
    const std::size_t k = std::stoul(index);
    return k < it->second.size() ? it->second[k] : "";
  }

  const Variables& vars_;
};

// [[ ... ]] / [ ... ] / test: string tests, joined by || and && left to right; file tests
// are true (the script runs where its files are); anything else is false.
bool condition(const std::vector<std::string>& words) {
  bool result = false;
  std::string join = "||";
  std::vector<std::string> test;
  auto evaluate = [](std::vector<std::string> t) {
    if (!t.empty() && (t.front() == "[[" || t.front() == "[" || t.front() == "test"))
      t.erase(t.begin());
    if (!t.empty() && (t.back() == "]]" || t.back() == "]")) t.pop_back();
    bool negate = false;
    while (!t.empty() && t.front() == "!") {
      negate = !negate;
      t.erase(t.begin());
    }
    bool v = false;
    if (t.size() == 1) {
      v = !t[0].empty();
    } else if (t.size() == 2 && (t[0] == "-z" || t[0] == "-n")) {
      v = t[0] == "-z" ? t[1].empty() : !t[1].empty();
    } else if (t.size() == 2 && t[0].size() == 2 && t[0][0] == '-') {
      v = true;  // -f, -d, -e, -x, ...
    } else if (t.size() == 3 && (t[1] == "==" || t[1] == "=" || t[1] == "!=")) {
      v = (t[0] == t[2]) == (t[1] != "!=");
    } else if (t.size() == 3 && (t[1] == "-eq" || t[1] == "-ne")) {
      v = (t[0] == t[2]) == (t[1] == "-eq");
    }
    return negate ? !v : v;
  };
  for (std::size_t i = 0; i <= words.size(); ++i) {
    if (i == words.size() || words[i] == "||" || words[i] == "&&") {
      const bool v = evaluate(test);
      result = join == "||" ? result || v : result && v;
      if (i < words.size()) join = words[i];
      test.clear();
    } else {
      test.push_back(words[i]);
    }
  }
  return result;
}

bool is_launcher(const std::string& program) {
  const std::string base = program.substr(program.find_last_of('/') + 1);
  for (const char* l : {"torchrun", "python", "python3", "deepspeed", "srun", "mpirun"})
    if (base == l) return true;
  return base.size() > 3 && base.compare(base.size() - 3, 3, ".py") == 0;
}

class Runner {
 public:
  Runner() = default;

  std::optional<std::vector<ShellWord>> run(const std::vector<Token>& tokens) {
    std::vector<Token> command;
    int depth = 0;
    for (const Token& t : tokens) {
      if (t.kind == Token::Kind::kOpen) ++depth;
      if (t.kind == Token::Kind::kClose) depth = std::max(0, depth - 1);
      if (t.kind == Token::Kind::kEnd && depth == 0) {
        if (execute(command)) return launch_;
        if (stopped_) return std::nullopt;
        command.clear();
      } else if (t.kind != Token::Kind::kEnd) {
        command.push_back(t);
      }
    }
    if (execute(command)) return launch_;
    return std::nullopt;
  }

 private:
  struct Frame {
    bool parent = true, done = false, active = true;
  };
  bool active() const { return frames_.empty() || frames_.back().active; }

  // One command; true when it is the launch.
  bool execute(std::vector<Token> command) {
    while (!command.empty() && command.front().kind == Token::Kind::kWord) {
      const std::string key = command.front().word.bare();
      if (key == "then" || key == "else" || key == "do") {
        if (key == "else" && !frames_.empty()) {
          Frame& f = frames_.back();
          f.active = f.parent && !f.done;
          f.done = true;
        }
        command.erase(command.begin());
        continue;
      }
      if (key == "fi" || key == "done") {
        if (key == "fi" && !frames_.empty()) frames_.pop_back();
        command.erase(command.begin());
        continue;
      }
      if (key == "if" || key == "elif") {
        std::vector<std::string> words;
        for (std::size_t k = 1; k < command.size(); ++k)
          if (command[k].kind == Token::Kind::kWord)
            for (auto& f : Expander(vars_).fields(command[k].word)) words.push_back(f);
        if (key == "if") {
          const bool parent = active();
          const bool v = parent && condition(words);
          frames_.push_back({parent, v, v});
        } else if (!frames_.empty()) {
          Frame& f = frames_.back();
          f.active = f.parent && !f.done && condition(words);
          f.done = f.done || f.active;
        }
        return false;
      }
      break;
    }
    if (command.empty() || !active()) return false;
    return simple(command);
  }

  bool simple(const std::vector<Token>& command) {
    const Expander expand(vars_);
    // `cat <<EOF > FILE`: the file the script writes, its text as the script expands it.
    const auto has = [&](Token::Kind kind) {
      return std::find_if(command.begin(), command.end(),
                          [&](const Token& t) { return t.kind == kind; });
    };
    if (const auto doc = has(Token::Kind::kHereDocument), target = has(Token::Kind::kRedirect);
        doc != command.end() && target != command.end()) {
      const Part& body = doc->word.parts[0];
      std::string path;
      for (const std::string& f : expand.fields(target->word)) path += f;
      files_[path] = body.kind == Part::Kind::kSingle ? body.text : expand.text(body.text);
    }
    std::vector<std::string> prefix;  // NAME=value written before a program
    // NAME, its value, and whether it appends (+=): set when the command is assignments alone.
    std::vector<std::pair<std::string, std::pair<std::vector<std::string>, bool>>> assigned;
    std::size_t k = 0;
    std::string first = command[0].word.bare();
    const bool declare = first == "export" || first == "declare" || first == "readonly" ||
                         first == "local" || first == "typeset";
    if (declare) ++k;
    while (k < command.size() && command[k].kind == Token::Kind::kWord) {
      const RawWord& w = command[k].word;
      const std::string head =
          w.parts.empty() || w.parts[0].kind != Part::Kind::kBare ? "" : w.parts[0].text;
      const auto [length, append] = assignment_of(head);
      if (length == 0) {
        if (!declare) break;
        // `export NAME` exports it; declare's own switches (-a, -n, ...) say nothing priced.
        if (first == "export" && w.bare().rfind('-', 0) != 0) exported_.push_back(w.bare());
        ++k;
        continue;
      }
      const std::string name = head.substr(0, length);
      std::vector<std::string> value;
      if (k + 1 < command.size() && command[k + 1].kind == Token::Kind::kOpen &&
          head.size() == length + (append ? 2 : 1) && w.parts.size() == 1) {
        std::size_t e = k + 2;
        for (; e < command.size() && command[e].kind == Token::Kind::kWord; ++e)
          for (auto& f : expand.fields(command[e].word)) value.push_back(f);
        k = e + 1;  // past ")"
      } else {
        RawWord rhs = w;
        rhs.parts[0].text = head.substr(length + (append ? 2 : 1));
        std::string joined_value;
        for (const Part& p : rhs.parts)
          joined_value += p.kind == Part::Kind::kSingle ? p.text : expand.text(p.text);
        value = {joined_value};
        ++k;
      }
      prefix.push_back(name + "=" + joined(value));
      assigned.push_back({name, {value, append}});
      if (declare && first == "export") exported_.push_back(name);
    }
    const bool program = k < command.size();
    if (!program || declare) {
      for (auto& [name, v] : assigned) {
        auto& slot = vars_[name];
        if (!v.second) slot.clear();
        slot.insert(slot.end(), v.first.begin(), v.first.end());
      }
      return false;
    }
    std::vector<ShellWord> words;
    for (; k < command.size(); ++k)
      if (command[k].kind == Token::Kind::kWord)
        for (auto& f : expand.fields(command[k].word)) words.push_back({f, command[k].word.line});
    if (words.empty()) return false;
    if (words.front().text == "exit") {
      stopped_ = true;
      return false;
    }
    // A *.py script, or torchtitan's trainer as a module (-m torchtitan.train).
    const bool names_script = std::any_of(words.begin(), words.end(), [](const ShellWord& w) {
      return (w.text.size() > 3 && w.text.compare(w.text.size() - 3, 3, ".py") == 0) ||
             w.text == "torchtitan.train";
    });
    if (!is_launcher(words.front().text) || !names_script) return false;
    const int line = words.front().line;
    std::vector<std::string> seen;
    for (const std::string& name : exported_)
      if (const auto it = vars_.find(name);
          it != vars_.end() && std::find(seen.begin(), seen.end(), name) == seen.end()) {
        seen.push_back(name);
        launch_.push_back({name + "=" + joined(it->second), line});
      }
    for (const std::string& p : prefix) launch_.push_back({p, line});
    launch_.insert(launch_.end(), words.begin(), words.end());
    return true;
  }

  Variables vars_;
  std::vector<std::string> exported_;
  std::vector<Frame> frames_;
  std::vector<ShellWord> launch_;
  bool stopped_ = false;

 public:
  std::map<std::string, std::string> files_;
};

}  // namespace

std::optional<ShellLaunch> launch_command(const std::string& text, const std::string& source) {
  Runner runner;
  auto words = runner.run(Lexer(text, source).tokens());
  if (!words) return std::nullopt;
  return ShellLaunch{std::move(*words), std::move(runner.files_)};
}

int launcher_world_size(const std::vector<ShellWord>& words, std::size_t begin, std::size_t end,
                        const std::string& source) {
  int nproc = 0, nnodes = 0;
  for (std::size_t j = begin; j < end && j < words.size(); ++j) {
    std::string name = words[j].text, value;
    const int line = words[j].line;
    const std::size_t eq = name.find('=');
    if (name.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const bool procs = name == "--nproc_per_node" || name == "--nproc-per-node" ||
                       name == "--num_gpus" || name == "--num-gpus";
    const bool nodes = name == "--nnodes" || name == "--num_nodes" || name == "--num-nodes";
    if (!procs && !nodes) continue;
    if (eq == std::string::npos) {
      if (j + 1 >= end || j + 1 >= words.size())
        throw Error(ErrorKind::kUsage, fmt::format("{}:{}", source, line),
                    fmt::format("{} needs a count", name));
      value = words[++j].text;
    }
    const bool digits =
        !value.empty() && value.size() < 7 &&
        std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits || std::stoi(value) < 1) {
      const std::string why =
          value.find(':') != std::string::npos
              ? "an elastic range of nodes; paraplan prices one world size: give one count"
          : value == "gpu" || value == "auto" || value == "cpu"
              ? "the launcher counts the devices itself; give the count"
              : fmt::format("expected a count of {} of at least 1", procs ? "processes" : "nodes");
      throw Error(ErrorKind::kUsage, fmt::format("{}:{}", source, line),
                  fmt::format("{} \"{}\": {}", name, value, why));
    }
    (procs ? nproc : nnodes) = std::stoi(value);
  }
  return nproc > 0 ? nproc * std::max(nnodes, 1) : 0;
}

}  // namespace paraplan::engines
