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
    std::cerr << "paraplan: " << e.what() << "\n";
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
