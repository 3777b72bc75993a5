// The reference benchmark: paraplan against Piper's and DAPPLE's recorded results, on their own
// inputs and cost models. Each case runs in a child process so that its CPU time, wall time and
// peak memory are its own. Prints paraplan's figure, the reference and the ratio, and whether
// each target of the foundation issue is met. Exit status 1 if an objective is wrong (a
// correctness failure); missed speed targets are reported but do not fail.
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <tbb/global_control.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cost/dapple_cost.h"
#include "cost/pase_cost.h"
#include "cost/piper_cost.h"
#include "io/dapple_reader.h"
#include "io/json_fields.h"
#include "io/mpt_reader.h"
#include "io/piper_reader.h"
#include "io/vtrain_reader.h"
#include "ir/cluster.h"
#include "ir/training_rules.h"
#include "search/dapple_candidates.h"
#include "search/dapple_search.h"
#include "search/intra_op.h"
#include "search/intra_op_frontier.h"
#include "search/llm.h"
#include "search/pipeline.h"
#include "search/pipeline_frontier.h"
#include "sim/transformer_program.h"
#include "validate/calibrate.h"
#include "zoo/cluster_presets.h"
#include "zoo/llm_models.h"
#include "zoo/pase_graphs.h"

namespace paraplan {
namespace {

const std::string kData = PARAPLAN_DATA;
constexpr double kGiB = 1073741824.0;

struct Measured {
  double value = NAN;  // what the child computed
  double cpu_s = 0, wall_s = 0, peak_mb = 0;
};

// Runs `work` in a child; returns its result and resource usage.
Measured measure(const std::function<double()>& work) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    double v = work();
    if (write(fds[1], &v, sizeof v) != sizeof v) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  Measured m;
  if (read(fds[0], &m.value, sizeof m.value) != sizeof m.value) m.value = NAN;
  close(fds[0]);
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.cpu_s = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec +
            usage.ru_stime.tv_usec / 1e6;
  m.peak_mb = usage.ru_maxrss / 1024.0;
  return m;
}

double piper_plan(const std::string& file, int k, double m, double b,
                  bool memory_objective = false) {
  io::PiperInput in = io::read_piper(kData + "/piper/" + file);
  PiperSettings s{k, m, b, in.model.microbatches};
  if (memory_objective) s.objective = PiperSettings::Objective::kMemory;
  PiperCostModel cost(in.model, s);
  Plan plan = search_pipeline(in.model, cost).plan;
  if (!memory_objective) return plan.feasible ? plan.objective : INFINITY;
  double need = 0;
  for (const auto& st : plan.stages) need = std::max(need, st.memory_bytes);
  return need;
}

int failures = 0, missed = 0;

// --quick (CI's run): each Piper setting timed in one process, on one thread, for up to 0.05 s of
// repetitions, instead of the best of up to three processes on one and on two threads; the
// objectives are checked the same. Figures for the record come from the full run.
bool quick = false;

// Piper's planner on one setting, as data/piper/piper_runs.tsv records it.
struct PiperRun {
  std::string id, file;
  int k = 0, n = 0;
  double m = 0, b = 0, objective = 0, plan_cpu_s = 0, process_cpu_s = 0, peak_mb = 0;
};

std::vector<PiperRun> read_piper_runs() {
  std::ifstream in(kData + "/piper/piper_runs.tsv");
  std::vector<PiperRun> runs;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream row(line);
    PiperRun r;
    std::string objective;
    row >> r.id >> r.file >> r.k >> r.m >> r.b >> r.n >> objective >> r.plan_cpu_s >>
        r.process_cpu_s >> r.peak_mb;
    r.objective = objective == "inf" ? INFINITY : std::stod(objective);
    runs.push_back(r);
  }
  return runs;
}

double process_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

// What a child reports of one planning case: the objective, then per thread count (1, 2) the
// planning CPU seconds (every thread) and wall seconds, each the best of a few repetitions.
struct PlanTimes {
  double objective = NAN;
  double cpu_s[2] = {NAN, NAN}, wall_s[2] = {NAN, NAN};
};

// Runs the search in a child (input read once, outside the timing); peak memory is the child's.
std::pair<PlanTimes, Measured> time_piper_child(const PiperRun& r) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    PlanTimes t;
    io::PiperInput in = io::read_piper(kData + "/piper/" + r.file);
    in.model.microbatches = r.n;
    const PiperSettings s{r.k, r.m, r.b, r.n};
    for (int threads = 1; threads <= (quick ? 1 : 2); ++threads) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      double spent = 0;
      for (int rep = 0; rep < 50 && spent < (quick ? 0.05 : 0.3); ++rep) {
        const double cpu0 = process_cpu_s();
        const auto wall0 = std::chrono::steady_clock::now();
        const PiperCostModel cost(in.model, s);
        const Plan plan = search_pipeline(in.model, cost).plan;
        const double cpu = process_cpu_s() - cpu0;
        const double wall =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
        t.objective = plan.feasible ? plan.objective : INFINITY;
        t.cpu_s[threads - 1] =
            std::isnan(t.cpu_s[threads - 1]) ? cpu : std::min(t.cpu_s[threads - 1], cpu);
        t.wall_s[threads - 1] =
            std::isnan(t.wall_s[threads - 1]) ? wall : std::min(t.wall_s[threads - 1], wall);
        spent += wall;
      }
    }
    if (write(fds[1], &t, sizeof t) != sizeof t) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  PlanTimes t;
  if (read(fds[0], &t, sizeof t) != sizeof t) t = PlanTimes{};
  close(fds[0]);
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  Measured m;
  m.peak_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;
  return {t, m};
}

// The best times of up to three children, until 1.5 s is spent on the case: on this VM one
// process in several runs the same search ~1.6× slower from start to end (both thread counts),
// so a case's figure is not one unlucky process. Peak memory: the largest child's.
std::pair<PlanTimes, Measured> time_piper_search(const PiperRun& r) {
  PlanTimes best;
  Measured peak;
  const auto start = std::chrono::steady_clock::now();
  for (int child = 0; child < (quick ? 1 : 3); ++child) {
    if (child > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > 1.5)
      break;
    const auto [t, m] = time_piper_child(r);
    best.objective = t.objective;
    for (int i = 0; i < 2; ++i) {  // fmin keeps the number where one side is NaN
      best.cpu_s[i] = std::fmin(best.cpu_s[i], t.cpu_s[i]);
      best.wall_s[i] = std::fmin(best.wall_s[i], t.wall_s[i]);
    }
    peak.peak_mb = std::max(peak.peak_mb, m.peak_mb);
  }
  return {best, peak};
}

void piper_section() {
  // Every setting of Piper's experiment functions and reference.md, against Piper's own planner
  // timed on the same machine (data/piper/piper_runs.tsv). Objectives: equal on BERT (1e-9
  // relative; the greedy knapsack is optimal there), at most Piper's on ResNet and GNMT (its
  // greedy is not). Speed: at least 50x less CPU than Piper (one thread), and BERT K = 2048 at
  // 8 GiB in at most 0.5 s and 100 MB.
  constexpr double kTargetRatio = 50;
  fmt::print(
      "Piper cost model, every Piper setting (data/piper/piper_runs.tsv): objective = time per "
      "sample; planning CPU (input read outside the timing), {}\n",
      quick ? "best of up to 50 runs within 0.05 s in one process, one thread (--quick: no "
              "two-thread column)"
            : "best of up to 50 runs within 0.3 s in each of up to 3 processes");
  fmt::print("{:<16} {:>5} {:>8} {:>16} {:>16}  {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8}  {}\n",
             "case", "K", "M(GiB)", "paraplan", "Piper", "cpu1(s)", "wall1(s)", "cpu2(s)",
             "wall2(s)", "Piper(s)", "cpu x", "peak MB", "verdict");
  int cases = 0, fast_enough = 0;
  double worst_ratio = INFINITY;
  std::string worst_case;
  for (const PiperRun& r : read_piper_runs()) {
    const auto [t, m] = time_piper_search(r);
    const bool bert = r.file == "bert32a100.json";
    bool ok;
    if (!std::isfinite(r.objective))
      ok = !std::isfinite(t.objective);
    else if (bert)
      ok = std::fabs(t.objective - r.objective) <= 1e-9 * r.objective;
    else
      ok = t.objective <= r.objective * (1 + 1e-9);
    std::string verdict = ok ? (!std::isfinite(r.objective) ? "no plan, as Piper"
                                : bert                      ? "objective equal"
                                                            : "objective <= Piper")
                             : "OBJECTIVE WRONG";
    failures += !ok;
    const double ratio = r.plan_cpu_s / t.cpu_s[0];
    ++cases;
    fast_enough += ratio >= kTargetRatio;
    if (ratio < worst_ratio) worst_ratio = ratio, worst_case = r.id;
    if (ratio < kTargetRatio) {
      verdict += fmt::format("; cpu x {}: MISSED", kTargetRatio);
      ++missed;
    }
    if (r.k == 2048 && bert && r.m == 8 * kGiB && r.b == 25 * kGiB && r.n == 1920) {
      const bool small = t.cpu_s[0] <= 0.5 && m.peak_mb <= 100;
      verdict += fmt::format("; <= 0.5 s, 100 MB: {}", small ? "met" : "MISSED");
      missed += !small;
    }
    fmt::print(
        "{:<16} {:>5} {:>8.3f} {:>16.12g} {:>16.12g}  {:>9.4f} {:>9.4f} {:>9.4f} {:>9.4f} "
        "{:>9.3f} {:>8.1f} {:>8.1f}  {}\n",
        r.id, r.k, r.m / kGiB, t.objective, r.objective, t.cpu_s[0], t.wall_s[0], t.cpu_s[1],
        t.wall_s[1], r.plan_cpu_s, ratio, m.peak_mb, verdict);
  }
  fmt::print("{} of {} Piper settings at >= {}x less CPU than Piper; the least: {} at {:.1f}x\n",
             fast_enough, cases, kTargetRatio, worst_case, worst_ratio);

  // Settings the reference file does not list: feasible exactly when the memory limit is at
  // least the smallest memory any plan needs (found by the same exact search, minimising memory).
  fmt::print("\nFeasibility sweep: infeasible exactly where no plan fits\n");
  fmt::print("{:<16} {:>5} {:>7}  {:>16} {:>14}  {}\n", "input", "K", "M(GiB)", "objective",
             "min mem (GiB)", "verdict");
  struct Sweep {
    const char* file;
    std::vector<int> ks;
  };
  for (const Sweep& sw :
       {Sweep{"bert32a100.json", {8, 32, 128, 512}}, Sweep{"resnet.json", {8, 32, 64}}}) {
    for (int k : sw.ks) {
      double need =
          measure([&] { return piper_plan(sw.file, k, 8 * kGiB, 25 * kGiB, true); }).value;
      for (double gib : {1.0, 2.0, 4.0, 8.0, 16.0}) {
        double obj = measure([&] { return piper_plan(sw.file, k, gib * kGiB, 25 * kGiB); }).value;
        bool consistent = std::isfinite(obj) == (gib * kGiB >= need);
        failures += !consistent;
        fmt::print("{:<16} {:>5} {:>7.1f}  {:>16.12g} {:>14.4f}  {}\n", sw.file, k, gib, obj,
                   need / kGiB, consistent ? "consistent" : "INCONSISTENT");
      }
    }
  }
}

// How many of DAPPLE's candidates (those it printed for the run, rebuilt, and those paraplan
// regenerates) the plan was checked against; -1 when one of them is faster than the plan.
int candidates_no_faster(const std::string& profile, int pbs, const std::vector<int>& ends, int gbs,
                         int mbs, const io::Json& printed) {
  const Model model = pbs > 0 ? io::read_dapple(kData + "/dapple/" + profile, pbs)
                              : io::read_dapple(kData + "/dapple/" + profile);
  DappleSettings s;
  s.machine_ends = ends;
  s.global_batch = gbs;
  s.microbatch_size = mbs;
  const DappleCostModel cost(model, dapple_states(model), s);
  const double best = search_dapple(cost).plan.objective;
  int count = 0;
  bool faster = false;
  const auto check = [&](const DappleLayout& layout) {
    ++count;
    faster = faster || cost.latency_s(layout) < best * (1 - 1e-12);
  };
  for_each_dapple_candidate(cost, [&](const DappleCandidate& c) { check(c.layout); });
  static const std::regex stage(R"(\((\d+), (\d+), (\d+), \{([0-9, ]*)\}\))");
  static const std::regex number(R"(\d+)");
  for (const auto& c : printed) {
    const std::string text = c.get<std::string>();
    DappleLayout layout;
    std::smatch rp;
    if (std::regex_search(text, rp, std::regex(R"(rp=(\d+))"))) layout.replicas = std::stoi(rp[1]);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), stage);
         it != std::sregex_iterator(); ++it) {
      layout.cuts.push_back(std::stoi((*it)[2]) - 1);
      const std::string ids = (*it)[4];
      layout.gpus.emplace_back();
      for (auto n = std::sregex_iterator(ids.begin(), ids.end(), number);
           n != std::sregex_iterator(); ++n)
        layout.gpus.back().push_back(std::stoi(n->str()));
    }
    if (layout.cuts.empty()) continue;
    layout.cuts.back() = cost.states().size() - 1;
    check(layout);
  }
  return faster ? -1 : count;
}

void dapple_section() {
  fmt::print(
      "\nDAPPLE cost model (data/dapple/reference/planner_runs.jsonl): speedup over one "
      "device\n");
  fmt::print(
      "{:<30} {:>5} {:>5} {:>4}  {:>10} {:>10} {:>8} {:>10}  {:>8} {:>8} {:>9} {:>8} {:>9} "
      "{:>6}  {}\n",
      "profile", "GBS", "dev", "mbs", "paraplan", "DAPPLE", "ratio", "DP", "cpu(s)", "wall(s)",
      "DAPPLE(s)", "cpu x", "peak(MB)", "cands", "verdict");
  std::ifstream in(kData + "/dapple/reference/planner_runs.jsonl");
  std::string line;
  double worst_cpu = 0;
  while (std::getline(in, line)) {
    io::Json run = io::parse_json_text(line, "planner_runs.jsonl");
    std::string profile = run["profile"];
    int pbs = run["pbs"], gbs = run["gbs"], mbs = run["mbs"];
    std::vector<int> ends = machine_ends(*parse_machine_sizes(run["devices"].get<std::string>()));
    double dapple = std::stod(std::regex_replace(run["best"].get<std::string>(),
                                                 std::regex(R"(^BEST speedup=(\S+) .*$)"), "$1"));
    double dp = run["dp_speedup"];
    Measured m = measure([&] {
      Model model = io::read_dapple(kData + "/dapple/" + profile, pbs);
      DappleSettings s;
      s.machine_ends = ends;
      s.global_batch = gbs;
      s.microbatch_size = mbs;
      DappleCostModel cost(model, dapple_states(model), s);
      return search_dapple(cost).plan.as<DappleDetail>().speedup;
    });
    // Every candidate DAPPLE printed for this run, rebuilt, and every one paraplan regenerates:
    // none may be faster than paraplan's plan under the same model.
    const int candidates = candidates_no_faster(profile, pbs, ends, gbs, mbs, run["cands"]);
    bool ok = m.value >= dapple * (1 - 1e-9) && m.value >= dp * (1 - 1e-9) && candidates >= 0;
    failures += !ok;
    bool fast = m.cpu_s <= 1.0;
    missed += !fast;
    worst_cpu = std::max(worst_cpu, m.cpu_s);
    fmt::print(
        "{:<30} {:>5} {:>5} {:>4}  {:>10.6f} {:>10.6f} {:>8.5f} {:>10.6f}  {:>8.3f} {:>8.3f} "
        "{:>9.2f} {:>8.0f} {:>9.1f} {:>6}  {}{}\n",
        profile, gbs, run["devices"].get<std::string>(), mbs, m.value, dapple, m.value / dapple, dp,
        m.cpu_s, m.wall_s, run["secs"].get<double>(),
        run["secs"].get<double>() / std::max(m.cpu_s, 1e-3), m.peak_mb, candidates,
        ok ? ">= DAPPLE, DP and every candidate" : "BELOW DAPPLE, DP OR A CANDIDATE",
        fast ? "" : "; cpu > 1 s: MISSED");
  }
  // Profiles without recorded runs (DAPPLE needs minutes on gnmt-16 and does not finish gnmt-32).
  fmt::print("\nProfiles without recorded DAPPLE runs (GBS 512, mbs 1)\n");
  for (std::string profile :
       {"amoeba-36-pbs-1.txt", "amoeba-18-pbs-8.txt", "amoeba-6-pbs-8-simplified.txt",
        "amoeba-6-pbs-8-complicated.txt", "gnmt-32-pbs-64-simplified.txt", "gnmt-16-pbs-64.txt",
        "gnmt-32-pbs-64.txt"}) {
    for (const char* layout : {"2x8", "16x1", "2x4"}) {
      std::vector<int> ends = machine_ends(*parse_machine_sizes(layout));
      Measured m = measure([&] {
        Model model = io::read_dapple(kData + "/dapple/" + profile);
        DappleSettings s;
        s.machine_ends = ends;
        s.global_batch = 512;
        DappleCostModel cost(model, dapple_states(model), s);
        auto r = search_dapple(cost);
        return r.plan.as<DappleDetail>().speedup /
               (cost.total_compute_s() / r.data_parallel_latency_s);
      });
      const int candidates = candidates_no_faster(profile, 0, ends, 512, 1, io::Json::array());
      bool ok = m.value >= 1 - 1e-9 && candidates >= 0;
      failures += !ok;
      bool fast = m.cpu_s <= 1.0;
      missed += !fast;
      fmt::print(
          "{:<30} {:>5}  speedup / DP speedup = {:>8.5f}  cpu {:>6.3f} s  wall {:>6.3f} s  "
          "peak {:>6.1f} MB  {:>6} DAPPLE candidates  {}{}\n",
          profile, layout, m.value, m.cpu_s, m.wall_s, m.peak_mb, candidates,
          ok ? ">= DP and every candidate" : "BELOW DP OR A CANDIDATE",
          fast ? "" : "; cpu > 1 s: MISSED");
    }
  }
}

double pase_plan(const std::string& graph, int p, int batch, double flops, double bw,
                 IntraOpOptions::Order order = IntraOpOptions::Order::kBest) {
  auto w = zoo::pase_graph(graph, batch);
  PaseSettings s;
  s.devices = p;
  s.min_block = w.min_block;
  s.flops_per_s = flops * 1e12;
  s.bandwidth_bytes_per_s = bw * 1e9;
  PaseCostModel cost(w.model, s);
  IntraOpOptions o;
  o.order = order;
  return solve_intra_op(cost.network(), o).objective;
}

void pase_section() {
  fmt::print(
      "\nPaSE (intra-op planner, pase cost model): reference runs of "
      "data/pase/reference.md\n");
  fmt::print("{:<5} {:<12} {:>3}  {:>20} {:>20} {:>10}  {:>8} {:>8} {:>9}  {:>9} {:>9}  {}\n",
             "run", "graph", "p", "paraplan total", "PaSE total", "ratio", "cpu s", "wall s",
             "peak MB", "PaSE cpu", "PaSE DP s", "verdict");
  struct Ref {
    const char* id;
    const char* graph;
    int p;
    double total, cpu, dp;
  } refs[] = {{"R1", "alexnet", 8, 97098296512.00, 0.51, 0.15},
              {"R2", "alexnet", 32, 53136349552.00, 0.58, 0.26},
              {"R3", "alexnet", 64, 41120456048.00, 0.59, 0.31},
              {"R6", "resnet101", 8, 1425262849920.00, 17.02, 40.34},
              {"R7", "inception3", 8, 782140602432.00, 5.82, 8.79},
              {"R8", "rnnlm", 8, 7462723813376.00, 0.50, 0.04},
              {"R9", "rnnlm", 32, 2625038401536.00, 0.50, 0.08},
              {"R11", "transformer", 8, 2340308361216.00, 22.69, 81.13}};
  for (const auto& r : refs) {
    Measured m = measure([&] { return pase_plan(r.graph, r.p, 128, 10, 16); });
    bool ok = std::abs(m.value - r.total) <= 1e-9 * r.total;
    failures += !ok;
    bool fast = m.cpu_s < 1.0;
    missed += !fast;
    fmt::print(
        "{:<5} {:<12} {:>3}  {:>20.2f} {:>20.2f} {:>10.7f}  {:>8.3f} {:>8.3f} {:>9.1f}  {:>9.2f} "
        "{:>9.2f}  {}{}\n",
        r.id, r.graph, r.p, m.value, r.total, m.value / r.total, m.cpu_s, m.wall_s, m.peak_mb,
        r.cpu, r.dp, ok ? "equal (1e-9)" : "DIFFERENT", fast ? "" : "; cpu >= 1 s: MISSED");
  }
  fmt::print(
      "\nSettings PaSE's file does not list: the optimum under a second, independent "
      "elimination order (min-degree) must be equal\n");
  fmt::print("{:<12} {:>3} {:>5} {:>6} {:>6}  {:>20} {:>20}  {:>8} {:>8} {:>9}  {}\n", "graph", "p",
             "batch", "TFLOPs", "GB/s", "paraplan total", "min-degree order", "cpu s", "wall s",
             "peak MB", "verdict");
  struct Unlisted {
    const char* graph;
    int p, batch;
    double flops, bw, cpu_target;
  } cases[] = {{"alexnet", 16, 128, 10, 16, 1},      {"alexnet", 128, 256, 10, 16, 1},
               {"alexnet", 32, 128, 125, 25, 1},     {"rnnlm", 64, 128, 10, 16, 1},
               {"rnnlm", 16, 64, 7, 12, 1},          {"resnet101", 32, 128, 10, 16, 1},
               {"resnet101", 64, 128, 10, 16, 1},    {"resnet101", 16, 64, 19.5, 300, 1},
               {"inception3", 32, 128, 10, 16, 1},   {"inception3", 64, 128, 10, 16, 1},
               {"transformer", 16, 128, 10, 16, 1},  {"transformer", 32, 128, 10, 16, 1},
               {"transformer", 32, 64, 312, 300, 1}, {"transformer", 64, 128, 10, 16, 0.3}};
  for (const auto& c : cases) {
    Measured m = measure([&] { return pase_plan(c.graph, c.p, c.batch, c.flops, c.bw); });
    Measured twin = measure([&] {
      return pase_plan(c.graph, c.p, c.batch, c.flops, c.bw, IntraOpOptions::Order::kMinDegree);
    });
    bool ok = std::abs(m.value - twin.value) <= 1e-9 * twin.value;
    failures += !ok;
    bool fast = m.cpu_s < c.cpu_target;
    missed += !fast;
    fmt::print(
        "{:<12} {:>3} {:>5} {:>6g} {:>6g}  {:>20.2f} {:>20.2f}  {:>8.3f} {:>8.3f} {:>9.1f}  "
        "{}{}\n",
        c.graph, c.p, c.batch, c.flops, c.bw, m.value, twin.value, m.cpu_s, m.wall_s, m.peak_mb,
        ok ? "equal" : "DIFFERENT",
        fast ? fmt::format(" (cpu < {:g} s)", c.cpu_target)
             : fmt::format("; cpu >= {:g} s: MISSED", c.cpu_target));
  }
}

// TensorOpt's question on PaSE's Transformer: the whole (step time, memory, devices) frontier
// on 16 devices at TensorOpt's 1 % memory granularity, against the 5 s the first-hour issue asks
// (85 s before the combined sets were kept). Its ends are exact under any step: the fastest
// point must equal the single-objective optimum.
void tensoropt_section() {
  fmt::print(
      "\nTensorOpt's frontier of PaSE's Transformer (batch 128, 10 TFLOP/s, 16 GB/s, memory step "
      "0.01)\n");
  fmt::print("{:>3}  {:>20} {:>20}  {:>8} {:>8} {:>9}  {:>8}  {}\n", "p", "fastest point",
             "optimum", "cpu s", "wall s", "peak MB", "target", "verdict");
  for (const int p : {8, 16}) {
    auto w = zoo::pase_graph("transformer", 128);
    PaseSettings s;
    s.devices = p;
    s.min_block = w.min_block;
    s.flops_per_s = 10e12;
    s.bandwidth_bytes_per_s = 16e9;
    Measured m = measure([&] {
      const PaseCostModel cost(w.model, s);
      IntraOpFrontierOptions o;
      o.memory_step = 0.01;
      const IntraOpFrontierResult f = intra_op_frontier(cost.network(), cost.resources(), o);
      return f.points.empty() ? NAN : f.points.front().objective;
    });
    const double optimum = pase_plan("transformer", p, 128, 10, 16);
    const bool ok = std::abs(m.value - optimum) <= 1e-9 * optimum;
    failures += !ok;
    const double target_s = 5;
    const bool fast = m.wall_s < target_s;
    missed += !fast;
    fmt::print("{:>3}  {:>20.2f} {:>20.2f}  {:>8.3f} {:>8.3f} {:>9.1f}  {:>8}  {}{}\n", p, m.value,
               optimum, m.cpu_s, m.wall_s, m.peak_mb, fmt::format("< {:g} s", target_s),
               ok ? "fastest exact" : "DIFFERENT", fast ? "" : "; wall >= target: MISSED");
  }
}

void llm_section() {
  fmt::print(
      "\nTransformer planner (analytic cost model): full knob search incl. cp, ep, vpp, "
      "ZeRO 0-3, overlap, recomputed layers and layer splits\n");
  fmt::print("{:<32} {:>10} {:>8} {:>8} {:>8} {:>12} {:>8} {:>10}  {}\n", "case", "configs",
             "cpu s", "wall s", "peak MB", "configs/s", "target s", "peer/ours", "verdict");
  struct Case {
    const char* label;
    const char* model;
    const char* cluster;
    const char* device;
    int devices;
    std::int64_t batch, seq;
    double target_s;
    double peer_s;              // published peer planning time for this case (0: none)
    TrainingConfig hand_tuned;  // Megatron-LM's published configuration (tp 0: none)
  };
  auto megatron = [](int tp, int pp, int dp, std::int64_t mb) {
    TrainingConfig t;
    t.tp = tp;
    t.pp = pp;
    t.dp = dp;
    t.micro_batch = mb;
    t.sequence_parallel = false;
    t.recompute = Recompute::kFull;
    return t;
  };
  const Case cases[] = {
      // Megatron-LM (Narayanan et al., SC'21, Table 1): GPT-3 175B on 1,024 A100, batch 1,536,
      // t 8, p 16; the analytic peer enumerating in Python needs > 9 min (the issue's figure).
      {"GPT-3 175B on 1,024 A100", "gpt3-175b", "dgx-a100", "A100", 1024, 1536, 2048, 1.0, 540,
       megatron(8, 16, 8, 1)},
      {"Llama-3 405B on 16,384 H100", "llama3-405b", "dgx-h100", "H100", 16384, 2048, 8192, 10.0, 0,
       megatron(0, 0, 0, 0)},
      {"Mixtral 8x7B on 256 H100", "mixtral-8x7b", "dgx-h100", "H100", 256, 1024, 4096, 10.0, 0,
       megatron(0, 0, 0, 0)},
      {"DeepSeek-V3-like on 2,048 H100", "deepseek-v3-like", "dgx-h100", "H100", 2048, 4096, 4096,
       10.0, 0, megatron(0, 0, 0, 0)}};
  for (const auto& c : cases) {
    auto settings = [&] {
      LlmSearchSettings s;
      s.devices = c.devices;
      s.global_batch = c.batch;
      s.seq_len = c.seq;
      return s;
    };
    auto cost = [&] {
      return AnalyticCostModel(*zoo::llm_model(c.model), *zoo::cluster_preset(c.cluster, c.devices),
                               default_calibration(c.device));
    };
    Measured m =
        measure([&] { return static_cast<double>(search_llm(cost(), settings()).evaluated); });
    bool fast = m.cpu_s <= c.target_s;
    missed += !fast;
    fmt::print("{:<32} {:>10.0f} {:>8.3f} {:>8.3f} {:>8.1f} {:>12.0f} {:>8g} {:>10}  {}\n", c.label,
               m.value, m.cpu_s, m.wall_s, m.peak_mb, m.value / std::max(m.cpu_s, 1e-6), c.target_s,
               c.peer_s > 0 ? fmt::format("{:.0f}x", c.peer_s / std::max(m.wall_s, 1e-6)) : "-",
               fast ? "met" : "MISSED");
    const AnalyticCostModel model = cost();
    const LlmSearchResult r = search_llm(model, settings());
    if (r.top.empty()) {
      fmt::print("  no plan fits\n");
      ++failures;
      continue;
    }
    const TrainingConfig& t = r.top[0].config;
    std::string split = t.stage_layers.empty() ? "even" : "";
    for (int n : t.stage_layers) {
      if (!split.empty()) split += ',';
      split += std::to_string(n);
    }
    fmt::print(
        "  best: tp {} cp {} pp {} dp {} ep {} mb {} vpp {} zero {}{}, layers {}: {:.3f} s, "
        "MFU {:.1f}%, {:.1f} GiB\n",
        t.tp, t.cp, t.pp, t.dp, t.ep, t.micro_batch, t.vpp, t.zero_stage,
        t.overlap_grad_reduce ? " overlap" : "", split, r.top[0].result.iteration_time_s,
        100 * r.top[0].result.mfu, r.top[0].result.memory.peak_bytes / 1073741824.0);
    if (c.hand_tuned.tp > 0) {
      TrainingConfig h = c.hand_tuned;
      h.global_batch = c.batch;
      h.seq_len = c.seq;
      apply_stack_defaults(h, {});  // on today's Megatron-Core, with the overlaps it applies
      const AnalyticResult hr = model.evaluate(h);
      fmt::print(
          "  Megatron-LM's hand-tuned tp {} pp {} dp {}: {:.3f} s ({}); ours/hand-tuned "
          "{:.3f}\n",
          h.tp, h.pp, h.dp, hr.iteration_time_s, hr.fits ? "fits" : "does not fit",
          r.top[0].result.iteration_time_s / hr.iteration_time_s);
    }
  }
}

void simulation_section() {
  fmt::print("\nSimulator and frontier (no targets in the issue; figures to watch)\n");
  fmt::print("{:<52} {:>10} {:>8} {:>8} {:>8} {:>12}  {}\n", "case", "events", "cpu s", "wall s",
             "peak MB", "events/s", "simulated vs analytic");
  struct SimCase {
    const char* label;
    int tp, pp, dp, vpp;
    std::int64_t mb;
    Recompute rc;
  } sims[] = {
      {"GPT-3 175B, 1,024 A100, t 8 p 16 d 8 (192 micro-batches)", 8, 16, 8, 1, 1,
       Recompute::kFull},
      {"GPT-3 175B, 1,024 A100, t 4 p 8 d 32 vpp 4", 4, 8, 32, 4, 2, Recompute::kSelective}};
  const AnalyticCostModel gpt3(*zoo::llm_model("gpt3-175b"), *zoo::cluster_preset("dgx-a100", 1024),
                               default_calibration("A100"));
  for (const auto& c : sims) {
    TrainingConfig t;
    t.global_batch = 1536;
    t.tp = c.tp;
    t.pp = c.pp;
    t.dp = c.dp;
    t.vpp = c.vpp;
    t.micro_batch = c.mb;
    t.recompute = c.rc;
    t.sequence_parallel = true;
    t.zero_stage = 1;
    Measured m = measure([&] {
      return static_cast<double>(sim::simulate_transformer(gpt3, t, sim::default_schedule(t))
                                     .result.timeline.events.size());
    });
    const auto s = sim::simulate_transformer(gpt3, t, sim::default_schedule(t));
    fmt::print(
        "{:<52} {:>10.0f} {:>8.3f} {:>8.3f} {:>8.1f} {:>12.0f}  {:.3f} s vs {:.3f} s ({:+.2f}%)\n",
        c.label, m.value, m.cpu_s, m.wall_s, m.peak_mb, m.value / std::max(m.cpu_s, 1e-6),
        s.iteration_time_s, s.analytic_time_s, 100 * s.difference);
  }
  fmt::print("{:<52} {:>10} {:>8} {:>8} {:>8}\n", "frontier", "points", "cpu s", "wall s",
             "peak MB");
  {
    Measured m = measure([&] {
      const AnalyticCostModel cost(*zoo::llm_model("llama3-70b"),
                                   *zoo::cluster_preset("dgx-h100", 256),
                                   default_calibration("H100"));
      LlmSearchSettings s;
      s.devices = 256;
      s.global_batch = 512;
      s.seq_len = 4096;
      s.frontier = true;
      s.top_k = 1;
      return static_cast<double>(search_llm(cost, s).frontier.size());
    });
    fmt::print("{:<52} {:>10.0f} {:>8.3f} {:>8.3f} {:>8.1f}\n",
               "Llama-3 70B on 256 H100 (transformer search)", m.value, m.cpu_s, m.wall_s,
               m.peak_mb);
  }
  {
    Measured m = measure([&] {
      const io::PiperInput in =
          io::read_piper(std::string(PARAPLAN_DATA) + "/piper/bert32a100.json");
      PiperSettings base{in.max_devices, in.memory_per_device_bytes, in.bandwidth_bytes_per_s,
                         in.model.microbatches};
      auto factory = [&](int devices, double memory) -> std::unique_ptr<PipelineCostModel> {
        PiperSettings st = base;
        st.max_devices = devices;
        st.memory_per_device_bytes = memory;
        return std::make_unique<PiperCostModel>(in.model, st);
      };
      PipelineFrontierOptions exact;
      exact.memory_step = 0;
      return static_cast<double>(pipeline_frontier(in.model, factory, {1, 2, 4, 8, in.max_devices},
                                                   base.memory_per_device_bytes, exact)
                                     .points.size());
    });
    fmt::print("{:<52} {:>10.0f} {:>8.3f} {:>8.3f} {:>8.1f}\n",
               "BERT (Piper file), K = 10, exact pipeline frontier", m.value, m.cpu_s, m.wall_s,
               m.peak_mb);
  }
  {
    const io::MeasuredRuns runs = io::read_vtrain_folder(std::string(PARAPLAN_DATA) + "/vtrain");
    const validate::FitData data{
        runs.multi, runs.single,
        io::read_mpt_table(std::string(PARAPLAN_DATA) + "/mpt/mpt_a100.tsv").runs};
    const int steps = 3000;
    const double before = validate::fit_score(data, default_calibration("A100")).objective;
    Measured m = measure([&] {  // in a child: the value is the fitted objective
      return validate::fit_calibration(data, default_calibration("A100"), {steps, 1})
          .after.objective;
    });
    fmt::print("{:<52} {:>10} {:>8} {:>8} {:>8}\n",
               "calibrate (vTrain + MPT runs, from the shipped A100 file)", "steps", "cpu s",
               "wall s", "peak MB");
    fmt::print(
        "{:<52} {:>10} {:>8.3f} {:>8.3f} {:>8.1f}  objective {:.3f} -> {:.3f}, {:.2f} ms per "
        "step\n",
        "1,549 vTrain + 139 MPT runs, seed 1", steps, m.cpu_s, m.wall_s, m.peak_mb, before, m.value,
        1e3 * m.cpu_s / steps);
  }
}

}  // namespace
}  // namespace paraplan

int main(int argc, char** argv) {
  // Sections by name (all without arguments): piper dapple pase tensoropt llm simulation;
  // --quick times each Piper setting once (CI).
  const std::pair<const char*, void (*)()> sections[] = {
      {"piper", paraplan::piper_section}, {"dapple", paraplan::dapple_section},
      {"pase", paraplan::pase_section},   {"tensoropt", paraplan::tensoropt_section},
      {"llm", paraplan::llm_section},     {"simulation", paraplan::simulation_section}};
  std::vector<std::string> chosen;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") {
      paraplan::quick = true;
      continue;
    }
    bool known = false;
    for (const auto& [name, run] : sections) known = known || arg == name;
    if (!known) {
      std::fprintf(stderr,
                   "paraplan_bench: unknown argument '%s' (valid: --quick and the sections piper, "
                   "dapple, pase, tensoropt, llm, simulation)\n",
                   argv[i]);
      return 2;
    }
    chosen.push_back(arg);
  }
  for (const auto& [name, run] : sections)
    if (chosen.empty() || std::find(chosen.begin(), chosen.end(), name) != chosen.end()) run();
  std::printf("\nsummary: %d objective failures, %d speed targets missed\n", paraplan::failures,
              paraplan::missed);
  return paraplan::failures > 0 ? 1 : 0;
}
