// The validate job's answer in words: predicted against measured per row, each set's mean
// absolute percentage error, the plan rankings, the memory verdicts and the worst rows.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "api/validate.h"

namespace paraplan::api {
namespace {

constexpr double kGiB = 1073741824.0;

void vtrain_rows(std::string& out, const std::vector<validate::ScoredRun>& rows) {
  out += fmt::format(
      "{:<7} {:>5} {:>6} {:>5} {:>6} {:>4} {:>5} {:>3} {:>3} {:>3}  {:>12} {:>12} {:>8}\n", "set",
      "line", "GPUs", "batch", "hidden", "L", "mb", "t", "p", "d", "measured s", "predicted s",
      "error");
  for (const auto& s : rows)
    out += fmt::format(
        "{:<7} {:>5} {:>6} {:>5} {:>6} {:>4} {:>5} {:>3} {:>3} {:>3}  {:>12.4f} {:>12.4f} "
        "{:>+7.1f}%\n",
        s.run.set, s.run.line, s.run.gpus, s.run.global_batch, s.run.hidden, s.run.layers,
        s.run.micro_batch, s.run.tp, s.run.pp, s.run.dp, s.run.iteration_time_s, s.predicted_s,
        100 * s.error());
}

std::string gpu_name(const io::MeasuredRun& r) {
  return fmt::format("{} {:.0f}GiB", r.device, r.device_memory_bytes / kGiB);
}

void mpt_rows(std::string& out, const std::vector<validate::ScoredRun>& rows) {
  out += fmt::format(
      "{:<5} {:>5} {:<11} {:>6} {:>5} {:>4} {:>4} {:>5}  {:>11} {:>11} {:>7}  {:>9} {:>8}\n",
      "model", "line", "GPU", "seq", "GPUs", "mb", "acc", "ckpt", "measured s", "predicted s",
      "error", "peak GiB", "of cap.");
  for (const auto& s : rows)
    out += fmt::format(
        "{:<5} {:>5} {:<11} {:>6} {:>5} {:>4} {:>4} {:>5}  {:>11.3f} {:>11.3f} {:>+6.1f}%  "
        "{:>9.2f} {:>7.1f}%{}\n",
        s.run.model, s.run.line, gpu_name(s.run), s.run.seq_len, s.run.gpus, s.run.micro_batch,
        s.run.global_batch / (s.run.micro_batch * s.run.gpus),
        s.run.recompute == Recompute::kFull ? "yes" : "no", s.run.iteration_time_s, s.predicted_s,
        100 * s.error(), s.predicted_peak_bytes / kGiB,
        100 * s.predicted_peak_bytes / s.run.device_memory_bytes, s.fits ? "" : "  does not fit");
}

void worst_rows(std::string& out, const std::vector<validate::ScoredRun>& rows, int count) {
  std::vector<const validate::ScoredRun*> order;
  for (const auto& r : rows) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return std::abs(a->error()) > std::abs(b->error());
  });
  for (int i = 0; i < count && i < static_cast<int>(order.size()); ++i) {
    const auto& s = *order[static_cast<std::size_t>(i)];
    out += fmt::format(
        "  line {}: {} seq {} on {} × {}, micro-batch {}{}: measured {:.3f} s, "
        "predicted {:.3f} s ({:+.1f}%)\n",
        s.run.line, s.run.model, s.run.seq_len, s.run.gpus, gpu_name(s.run), s.run.micro_batch,
        s.run.recompute == Recompute::kFull ? ", recomputed" : "", s.run.iteration_time_s,
        s.predicted_s, 100 * s.error());
  }
}

void published_rows(std::string& out, const std::vector<validate::ScoredPublished>& rows) {
  if (rows.empty()) return;
  double sum = 0, worst = 0;
  for (const auto& s : rows) {
    const double published_tps = s.run.tokens_per_s_per_device;
    const double predicted_tps = published_tps * s.measured_s / s.predicted.iteration_time_s;
    out += fmt::format(
        "published: {}: {:.0f} tokens/s per device ({:.3f} s), predicted {:.0f} "
        "({:.3f} s, MFU {:.1f}%): {:+.1f}%; peak {:.1f} of {:.0f} GiB ({})\n",
        s.run.name, published_tps, s.measured_s, predicted_tps, s.predicted.iteration_time_s,
        100 * s.predicted.mfu, 100 * s.error(), s.predicted.memory.peak_bytes / kGiB,
        s.device_memory_bytes / kGiB,
        s.predicted.fits ? "fits, as it ran" : "does not fit, yet it ran");
    sum += std::abs(s.error());
    worst = std::max(worst, std::abs(s.error()));
  }
  out += fmt::format(
      "published runs (never fitted): {} runs, mean absolute percentage error "
      "{:.2f}%, largest {:.2f}% (target within 15% each)\n",
      rows.size(), 100 * sum / static_cast<double>(rows.size()), 100 * worst);
}

void mpt_summary(std::string& out, const std::vector<validate::ScoredRun>& mpt,
                 const io::MptTable& mpt_table, int worst);

void nemo_rows(std::string& out, const std::vector<validate::ScoredPublished>& rows, bool quiet) {
  if (rows.empty()) return;
  double sum = 0, worst = 0;
  int fits = 0;
  for (const auto& s : rows) {
    if (!quiet)
      out += fmt::format(
          "nemo-h100: {:<24} measured {:7.3f} s, predicted {:7.3f} s (MFU {:.1f}%): {:+6.1f}%; "
          "peak {:.1f} of {:.0f} GiB ({})\n",
          s.run.name, s.measured_s, s.predicted.iteration_time_s, 100 * s.predicted.mfu,
          100 * s.error(), s.predicted.memory.peak_bytes / kGiB, s.device_memory_bytes / kGiB,
          s.predicted.fits ? "fits, as it ran" : "does not fit, yet it ran");
    sum += std::abs(s.error());
    worst = std::max(worst, std::abs(s.error()));
    fits += s.predicted.fits;
  }
  out += fmt::format(
      "NeMo / Megatron-Core on H100: {} runs, mean absolute percentage error {:.2f}% (target 8%), "
      "largest {:.2f}%; {} of {} predicted to fit (all ran)\n",
      rows.size(), 100 * sum / static_cast<double>(rows.size()), 100 * worst, fits, rows.size());
}

struct SingleGpuTally {
  double time_sum = 0, time_worst = 0, peak_sum = 0, peak_worst = 0;
  int runs = 0, ran = 0, wrong = 0, oom = 0, oom_caught = 0;
  std::string words(const std::string& label) const {
    const double n = std::max(1, ran);
    return fmt::format(
        "{}: {} runs, time mean absolute percentage error {:.2f}% (target 8%), largest {:.2f}%; "
        "peak against the allocator's {:.2f}%, largest {:.2f}% (target 8%); {} of {} "
        "out-of-memory runs predicted not to fit, {} false verdicts\n",
        label, runs, 100 * time_sum / n, 100 * time_worst, 100 * peak_sum / n, 100 * peak_worst,
        oom_caught, oom, wrong);
  }
};

void single_gpu_row(std::string& out, const std::string& set, const validate::ScoredSingleGpu& s,
                    bool quiet, SingleGpuTally& tally) {
  const io::SingleGpuRun& r = s.run;
  const std::string shape = fmt::format(
      "{} seq {} batch {} micro-batch {}{}{}", r.model_name, r.seq_len, r.batch, r.micro_batch,
      r.recompute == Recompute::kFull ? " recomputed" : "", r.compiled ? " compiled" : "");
  const std::string verdict =
      s.predicted.fits == r.ran
          ? (r.ran ? "fits, as it ran" : "does not fit, as it ran out of memory")
          : (r.ran ? "does not fit, yet it ran" : "FITS, YET IT RAN OUT OF MEMORY");
  const std::string line = r.place.substr(r.place.rfind(':') + 1);
  if (!quiet && r.ran)
    out += fmt::format(
        "single-gpu: {}: {} (line {}): measured {:.3f} s, predicted {:.3f} s: {:+.1f}%; peak "
        "{:.2f} GiB predicted, the allocator held {:.2f}: {:+.1f}% ({})\n",
        set, shape, line, r.iteration_time_s, s.predicted.iteration_time_s, 100 * s.time_error(),
        s.predicted.memory.peak_bytes / kGiB, r.peak_reserved_bytes / kGiB, 100 * s.peak_error(),
        verdict);
  if (!quiet && !r.ran)
    out += fmt::format(
        "single-gpu: {}: {} (line {}): ran out of memory; peak {:.2f} GiB predicted of {:.2f} "
        "({})\n",
        set, shape, line, s.predicted.memory.peak_bytes / kGiB, s.device_memory_bytes / kGiB,
        verdict);
  ++tally.runs;
  tally.wrong += !s.verdict_right();
  if (!r.ran) {
    ++tally.oom;
    tally.oom_caught += !s.predicted.fits;
    return;
  }
  ++tally.ran;
  tally.time_sum += std::abs(s.time_error());
  tally.time_worst = std::max(tally.time_worst, std::abs(s.time_error()));
  tally.peak_sum += std::abs(s.peak_error());
  tally.peak_worst = std::max(tally.peak_worst, std::abs(s.peak_error()));
}

// Each set's rows and summary, then (for more than one set) all of them pooled: the figures
// the bands of ir/knobs.h are.
void single_gpu_rows(std::string& out, const std::vector<SingleGpuSet>& sets, bool quiet) {
  SingleGpuTally all;
  for (const SingleGpuSet& set : sets) {
    SingleGpuTally one;
    for (const auto& s : set.rows) {
      single_gpu_row(out, set.name, s, quiet, one);
      single_gpu_row(out, set.name, s, true, all);
    }
    if (sets.size() > 1) out += one.words("plain PyTorch on one GPU, " + set.name);
  }
  if (!sets.empty())
    out += all.words(sets.size() > 1 ? "plain PyTorch on one GPU, all sets"
                                     : "plain PyTorch on one GPU");
}

}  // namespace

std::string validate_words(const ValidateResult& v, bool summary, int worst) {
  std::string out;
  const auto& [multi, single, mpt, mpt_table, published, nemo, single_gpu] = v;
  if (!summary) {
    vtrain_rows(out, multi);
    vtrain_rows(out, single);
    if (!mpt.empty()) mpt_rows(out, mpt);
  }
  out += fmt::format(
      "vTrain multi-node:  {} runs, mean absolute percentage error {:.2f}% (target 8%)\n",
      multi.size(), validate::mean_absolute_percentage_error(multi));
  out += fmt::format(
      "vTrain single-node: {} runs, mean absolute percentage error {:.2f}% (target 10%)\n",
      single.size(), validate::mean_absolute_percentage_error(single));
  for (const auto& r : validate::rankings(multi))
    out += fmt::format(
        "ranking {:.1f}B on {} GPUs ({} configurations): first-ranked (line {}) measures {:.3f} s, "
        "measured best (line {}) {:.3f} s: {:+.1f}% (target within 2%)\n",
        r.parameters_billion, r.gpus, r.configurations, r.picked->run.line,
        r.picked->run.iteration_time_s, r.best->run.line, r.best->run.iteration_time_s,
        100 * r.slowdown());
  if (!mpt.empty() || !mpt_table.skipped.empty()) mpt_summary(out, mpt, mpt_table, worst);
  published_rows(out, published);
  nemo_rows(out, nemo, summary);
  single_gpu_rows(out, single_gpu, summary);
  return out;
}

namespace {

void mpt_summary(std::string& out, const std::vector<validate::ScoredRun>& mpt,
                 const io::MptTable& mpt_table, int worst) {
  // Per GPU type of the MPT set, then all of it.
  std::vector<std::string> gpus;
  for (const auto& s : mpt)
    if (std::find(gpus.begin(), gpus.end(), gpu_name(s.run)) == gpus.end())
      gpus.push_back(gpu_name(s.run));
  for (const auto& g : gpus) {
    std::vector<validate::ScoredRun> part;
    for (const auto& s : mpt)
      if (gpu_name(s.run) == g) part.push_back(s);
    out += fmt::format(
        "MPT (FSDP, FlashAttention) on {}: {} runs, mean absolute percentage error {:.2f}%\n", g,
        part.size(), validate::mean_absolute_percentage_error(part));
  }
  int fits = 0;
  double closest = 0;
  for (const auto& s : mpt) {
    fits += s.fits;
    closest = std::max(closest, s.predicted_peak_bytes / s.run.device_memory_bytes);
  }
  out += fmt::format(
      "MPT: {} runs, mean absolute percentage error {:.2f}% (target 8%); memory: {} "
      "of {} predicted to fit (all ran), highest predicted peak {:.1f}% of capacity\n",
      mpt.size(), validate::mean_absolute_percentage_error(mpt), fits, mpt.size(), 100 * closest);
  if (!mpt.empty()) {
    out += "MPT worst rows:\n";
    worst_rows(out, mpt, worst);
  }
  for (const auto& s : mpt_table.skipped) out += "skipped " + s + "\n";
}

}  // namespace

}  // namespace paraplan::api
