// paraplan: plans the parallel training of deep neural networks. A thin shell over the library:
// parse flags, call, print; errors become one message and a documented exit code.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>

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

// The nearest of `names` to `typed`, when close enough to be a slip (a third of its letters).
std::string nearest(const std::string& typed, const std::vector<std::string>& names) {
  std::string best;
  std::size_t distance = std::max<std::size_t>(2, typed.size() / 3) + 1;  // a swap costs 2
  for (const std::string& n : names) {
    const std::size_t d = paraplan::edit_distance(typed, n);
    if (d < distance) distance = d, best = n;
  }
  return best;
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
      const std::string guess = nearest(argv[1], commands);
      std::string all;
      for (const auto& c : commands) all += (all.empty() ? "" : ", ") + c;
      return "unknown command \"" + std::string(argv[1]) + "\"" +
             (guess.empty() ? "" : "; did you mean \"" + guess + "\"?") + " (commands: " + all +
             ")";
    }
    return words;
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e) == nullptr) return words;
  std::vector<std::string> flags;
  for (const CLI::Option* o : chosen[0]->get_options())
    for (const std::string& name : o->get_lnames()) flags.push_back("--" + name);
  for (const std::string& extra : chosen[0]->remaining()) {
    if (extra.rfind("--", 0) != 0) continue;
    const std::string typed = extra.substr(0, extra.find('='));
    const std::string guess = nearest(typed, flags);
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
