// Errors are values with a place (file, JSON pointer or line) and a message; cli/ maps their kind
// to a documented exit code (docs/cli.md).
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace paraplan {

enum class ErrorKind {
  kUsage = 2,       ///< bad command-line flags
  kInput = 3,       ///< a malformed or inconsistent input file
  kInfeasible = 4,  ///< no plan fits the limits
  kIo = 5,          ///< a file that cannot be read or written
  kLimit = 6,       ///< the instance is beyond what the exact search is allowed to do
  kInternal = 7,    ///< paraplan's own failure (a schedule that deadlocks): a bug to report
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string place, const std::string& message)
      : std::runtime_error(place.empty() ? message : place + ": " + message),
        kind_(kind),
        place_(std::move(place)) {}
  ErrorKind kind() const { return kind_; }
  const std::string& place() const { return place_; }

 private:
  ErrorKind kind_;
  std::string place_;
};

/// A request's input is wrong (an unknown model name, a cluster too small, a schedule the plan
/// cannot replay): kUsage, placed at the request's field. what() reads "FIELD REST"; each front
/// end renders the field in its own words (the CLI its flag, "--model"; Python its keyword).
class FieldError : public Error {
 public:
  /// `rest` follows the field's name: ": not a preset" or " 5: more than the cluster has".
  FieldError(std::string field, std::string rest)
      : Error(ErrorKind::kUsage, "", field + rest),
        field_(std::move(field)),
        rest_(std::move(rest)) {}
  const std::string& field() const { return field_; }
  const std::string& rest() const { return rest_; }

 private:
  std::string field_;
  std::string rest_;
};

/// Fields of a request that the chosen job does not take: kUsage, rendered by each front end
/// in its own words (the CLI its flags, Python its keywords): "--x and --y do not apply to WHAT,
/// which takes --a, --b". what() renders the fields by name.
class NotApplicable : public Error {
 public:
  NotApplicable(std::vector<std::string> refused, std::string what, std::vector<std::string> takes)
      : Error(ErrorKind::kUsage, "",
              render_with(refused, what, takes, [](const std::string& f) { return f; })),
        refused_(std::move(refused)),
        what_(std::move(what)),
        takes_(std::move(takes)) {}
  template <typename Name>
  std::string render(Name name) const {
    return render_with(refused_, what_, takes_, name);
  }

 private:
  template <typename Name>
  static std::string render_with(const std::vector<std::string>& refused, const std::string& what,
                                 const std::vector<std::string>& takes, Name name) {
    auto listed = [&](const std::vector<std::string>& fields) {
      std::string out;
      for (std::size_t i = 0; i < fields.size(); ++i) {
        if (i > 0) out += i + 1 == fields.size() ? (fields.size() > 2 ? ", and " : " and ") : ", ";
        out += name(fields[i]);
      }
      return out;
    };
    return listed(refused) + (refused.size() == 1 ? " does" : " do") + " not apply to " + what +
           ", which takes " + listed(takes);
  }
  std::vector<std::string> refused_;
  std::string what_;
  std::vector<std::string> takes_;
};

}  // namespace paraplan
