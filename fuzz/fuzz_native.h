// The native formats read from one document: a model, a cluster, a calibration, and a plan of
// the built-in layer model (its layer ids are what a plan file names).
#pragma once

#include "fuzz_support.h"
#include "io/calibration_file.h"
#include "io/native_json.h"
#include "zoo/transformer_stack.h"

namespace paraplan::fuzz {

inline void read_native(const io::Json& doc) {
  static const Model layers = zoo::transformer_stack({});
  refuse_only_with_error([&] { write_out(io::model_to_json(io::model_from_json(doc, "fuzz"))); });
  refuse_only_with_error(
      [&] { write_out(io::cluster_to_json(io::cluster_from_json(doc, "fuzz"))); });
  refuse_only_with_error(
      [&] { write_out(io::calibration_to_json(io::calibration_from_json(doc, "fuzz"))); });
  refuse_only_with_error(
      [&] { write_out(io::plan_to_json(io::plan_from_json(doc, layers, "fuzz"), layers)); });
}

}  // namespace paraplan::fuzz
