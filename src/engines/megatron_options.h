// The vocabulary of Megatron-LM's pretrain_gpt.py that paraplan knows: the options that change
// time or memory (read) and those that do not (ignored); any other is refused by the reader.
#pragma once

#include <set>
#include <string>

namespace paraplan::engines {

const std::set<std::string>& megatron_read_options();
const std::set<std::string>& megatron_ignored_options();

}  // namespace paraplan::engines
