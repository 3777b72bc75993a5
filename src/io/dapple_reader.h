// Reader for PipeDream / DAPPLE profile text (docs/specs/dapple.md §1): node lines
// "nodeN -- desc -- forward_compute_time=F, backward_compute_time=B, activation_size=A,
// parameter_size=P[ -- stage_id=S]" and indented edge lines "nodeA -- nodeB".
#pragma once

#include <string>

#include "ir/model.h"

namespace paraplan::io {

/// Layers keep the file's node order; id = N of "nodeN"; name = the description. One option at
/// t = 1: compute = (F + B) / 1000 seconds at the profile batch, parameters P bytes; output_bytes
/// = A (a list "[a; b]" is summed); every out-edge carries A. `profile_batch_size` is taken from
/// the argument if > 0, else from a "-pbs-N" in the file name, else 1.
Model read_dapple(const std::string& path, int profile_batch_size = 0);
Model parse_dapple(const std::string& text, const std::string& source, int profile_batch_size);
/// `given` if > 0, else N from "-pbs-N" in the file name, else 0 (parse_dapple then uses 1).
int profile_batch_from_name(const std::string& path, int given = 0);

}  // namespace paraplan::io
