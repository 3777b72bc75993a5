// A launch script as bash runs it, far enough to find the command it launches with: the
// variables and arrays the script sets (NAME=value, export, NAME=( ... ), +=), their
// expansions ($NAME, ${NAME}, ${NAME:-default}, ${NAME[@]}, $((arithmetic))), quoting and word
// splitting, `\` continuations, comments, here-documents and if/elif/else/fi on [[ ]] / [ ]
// tests of strings. What it cannot know (positional arguments without a default, $(commands),
// variables the script never sets) stays as written, for the reader to name.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace paraplan::engines {

struct ShellWord {
  std::string text;
  int line = 1;  ///< where the word (or the array element it came from) is written
};

/// A script's launch, and the files its here-documents wrote before it (`cat <<EOF > FILE`),
/// by the path as the script spells it after expansion.
struct ShellLaunch {
  std::vector<ShellWord> words;
  std::map<std::string, std::string> files;
};

/// `s` without one pair of matching quotes around it ("x" or 'x'), else as it is.
std::string unquoted(std::string s);

/// The script's launch: the first command it runs whose program is a launcher (torchrun,
/// python, python3, deepspeed, srun, mpirun) or a *.py file and which names a *.py script, its
/// words expanded, preceded by NAME=value for each variable the script exported before it and
/// each assignment written in front of it. nullopt when no such command runs. Usage errors
/// (unclosed quotes, here-documents or ifs) are placed at `source`:LINE.
std::optional<ShellLaunch> launch_command(const std::string& text, const std::string& source);

/// The world size a launcher's options give among words[begin, end) (the words before the
/// script or module): torchrun's --nproc-per-node / --nproc_per_node × --nnodes, and the
/// deepspeed launcher's --num_gpus × --num_nodes, as `--x N` or `--x=N`; 0 when no count of
/// processes is given. A count that is not a whole number of at least 1 (a variable that
/// expanded to nothing, torchrun's "gpu" or "auto", an elastic range of nodes "1:4") is a usage
/// error at `source`:LINE naming the option.
int launcher_world_size(const std::vector<ShellWord>& words, std::size_t begin, std::size_t end,
                        const std::string& source);

}  // namespace paraplan::engines
