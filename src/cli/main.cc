// paraplan: plans the parallel training of deep neural networks. A thin shell over the library:
// parse flags, call, print; errors become one message and a documented exit code.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <regex>
#include <sstream>

#include "cli/calibrate_command.h"
#include "cli/convert_command.h"
#include "cli/evaluate_command.h"
#include "cli/flags.h"
#include "cli/frontier_command.h"
#include "cli/inspect_command.h"
#include "cli/plan_command.h"
#include "cli/simulate_command.h"
#include "cli/validate_command.h"
#include "ir/error.h"
#include "ir/names.h"

namespace {

// A number in CLI11's range message ("1.000000") as typed ("1").
std::string plain_number(const std::string& text) {
  try {
    return fmt::format("{:.15g}", std::stod(text));
  } catch (const std::exception&) {
    return text;
  }
}

// CLI11's words for a bad value, rewritten to say what is wrong and what would be valid:
// "--stack: megatorn not in {megatron,fsdp,deepspeed}" (an enum: with the one probably meant),
// "--devices: Value abc not in range 1.000000 to 1048576.000000", "Could not convert: --batch =
// 2.5". Empty when the message is none of these.
std::string bad_value_words(const CLI::App& command, const std::string& words) {
  static const std::regex member(R"(^(--[a-z0-9-]+): (.*) not in \{(.*)\}$)");
  static const std::regex range(R"(^(--[a-z0-9-]+): Value (.*) not in range (\S+) to (\S+)$)");
  static const std::regex convert(R"(^Could not convert: (--[a-z0-9-]+) = (.*)$)");
  std::smatch m;
  auto whole = [&](const std::string& flag) {
    const CLI::Option* o = command.get_option_no_throw(flag);
    return o != nullptr && o->get_type_name().rfind("INT", 0) == 0;
  };
  if (std::regex_match(words, m, member)) {
    std::vector<std::string> choices;
    std::string listed;
    std::stringstream all(m[3].str());
    for (std::string c; std::getline(all, c, ',');) {
      choices.push_back(c);
      listed += (listed.empty() ? "" : ", ") + c;
    }
    const std::string guess = paraplan::nearest_name(m[2].str(), choices);
    return m[1].str() + " " + m[2].str() + ": expected one of " + listed +
           (guess.empty() ? "" : "; did you mean \"" + guess + "\"?");
  }
  if (std::regex_match(words, m, range)) {
    const std::string flag = m[1].str(), value = m[2].str();
    char* end = nullptr;
    std::strtod(value.c_str(), &end);
    const bool numeric = !value.empty() && end != nullptr && *end == '\0';
    return flag + " " + value + ": expected " +
           (numeric       ? "a value"
            : whole(flag) ? "a whole number"
                          : "a number") +
           " from " + plain_number(m[3].str()) + " to " + plain_number(m[4].str());
  }
  if (std::regex_match(words, m, convert)) {
    const std::string flag = m[1].str();
    return flag + " " + m[2].str() + ": expected " + (whole(flag) ? "a whole number" : "a number");
  }
  return "";
}

// What CLI11 says, and for an unknown flag or command the one that was probably meant.
std::string parse_error_words(const CLI::App& app, const CLI::ParseError& e, int argc,
                              char** argv) {
  std::string words = e.what();
  const std::vector<CLI::App*> chosen = app.get_subcommands();
  if (chosen.empty()) {  // no command: was the first word a misspelt one?
    std::vector<std::string> commands;
    for (const CLI::App* c : app.get_subcommands({})) commands.push_back(c->get_name());
    if (argc > 1 && argv[1][0] != '-') {
      const std::string guess = paraplan::nearest_name(argv[1], commands);
      std::string all;
      for (const auto& c : commands) all += (all.empty() ? "" : ", ") + c;
      return "unknown command \"" + std::string(argv[1]) + "\"" +
             (guess.empty() ? "" : "; did you mean \"" + guess + "\"?") + " (commands: " + all +
             ")";
    }
    return words;
  }
  if (const std::string value_words = bad_value_words(*chosen[0], words); !value_words.empty())
    return value_words;
  if (dynamic_cast<const CLI::ExtrasError*>(&e) == nullptr) return words;
  std::vector<std::string> flags;
  for (const CLI::Option* o : chosen[0]->get_options())
    for (const std::string& name : o->get_lnames()) flags.push_back("--" + name);
  for (const std::string& extra : chosen[0]->remaining()) {
    if (extra.rfind("--", 0) != 0) continue;
    const std::string typed = extra.substr(0, extra.find('='));
    const std::string guess = paraplan::nearest_name(typed, flags);
    if (!guess.empty())
      words += "; did you mean " + guess + "? (" + chosen[0]->get_name() + " --help lists them)";
  }
  return words;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"paraplan: plans how to split deep-learning training across devices"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "paraplan 0.1.0");
  int exit_code = 0;
  paraplan::cli::add_plan_command(app, exit_code);
  paraplan::cli::add_convert_command(app, exit_code);
  paraplan::cli::add_inspect_command(app, exit_code);
  paraplan::cli::add_evaluate_command(app, exit_code);
  paraplan::cli::add_validate_command(app, exit_code);
  paraplan::cli::add_calibrate_command(app, exit_code);
  paraplan::cli::add_simulate_command(app, exit_code);
  paraplan::cli::add_frontier_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "paraplan: " << parse_error_words(app, e, argc, argv) << "\n";
    return static_cast<int>(paraplan::ErrorKind::kUsage);
  } catch (const paraplan::RuleViolation& e) {  // a broken knob rule, in the flags' words
    std::cerr << "paraplan: " << e.violation().render(paraplan::cli::flag_name) << "\n";
    return static_cast<int>(e.kind());
  } catch (const paraplan::FieldError& e) {  // a request's field, named by its flag
    std::cerr << "paraplan: " << paraplan::cli::field_flag(e.field()) << e.rest() << "\n";
    return static_cast<int>(e.kind());
  } catch (const paraplan::NotApplicable& e) {  // fields the job does not take, by their flags
    std::cerr << "paraplan: " << e.render(paraplan::cli::field_flag) << "\n";
    return static_cast<int>(e.kind());
  } catch (const paraplan::Error& e) {
    std::cerr << "paraplan: "
              << (e.kind() == paraplan::ErrorKind::kInternal ? "internal error: " : "") << e.what()
              << "\n";
    return static_cast<int>(e.kind());
  } catch (const std::bad_alloc&) {
    std::cerr << "paraplan: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "paraplan: internal error: " << e.what() << "\n";
    return 1;
  }
  return exit_code;
}
