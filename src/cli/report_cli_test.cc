// The HTML report: self-contained, and rendered by headless Chromium (Debian's chromium) to a
// screenshot that is not blank.
#include <gtest/gtest.h>
#include <zlib.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "cli/cli_test_support.h"
#include "render/svg_plot.h"

namespace {

using paraplan::testing_support::Outcome;
using paraplan::testing_support::run;
using paraplan::testing_support::run_shell;
using paraplan::testing_support::write_temp;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::uint32_t be32(const std::string& s, std::size_t at) {
  return (std::uint32_t(std::uint8_t(s[at])) << 24) |
         (std::uint32_t(std::uint8_t(s[at + 1])) << 16) |
         (std::uint32_t(std::uint8_t(s[at + 2])) << 8) | std::uint32_t(std::uint8_t(s[at + 3]));
}

struct Image {
  std::uint32_t width = 0, height = 0, channels = 0;
  std::vector<std::uint8_t> pixels;  // rows of width × channels bytes
};

// A PNG of 8-bit RGB or RGBA, not interlaced (what Chromium writes).
Image decode_png(const std::string& png) {
  Image img;
  if (png.size() < 8 || png.compare(1, 3, "PNG") != 0) return img;
  std::string idat;
  int colour = 0, depth = 0, interlace = 0;
  for (std::size_t at = 8; at + 8 <= png.size();) {
    const std::uint32_t length = be32(png, at);
    const std::string type = png.substr(at + 4, 4);
    if (type == "IHDR") {
      img.width = be32(png, at + 8);
      img.height = be32(png, at + 12);
      depth = std::uint8_t(png[at + 16]);
      colour = std::uint8_t(png[at + 17]);
      interlace = std::uint8_t(png[at + 20]);
    } else if (type == "IDAT") {
      idat += png.substr(at + 8, length);
    }
    at += 12 + length;
  }
  if (depth != 8 || interlace != 0 || (colour != 2 && colour != 6)) return {};
  img.channels = colour == 6 ? 4 : 3;
  const std::size_t stride = img.width * img.channels;
  std::vector<std::uint8_t> raw((stride + 1) * img.height);
  uLongf size = raw.size();
  if (uncompress(raw.data(), &size, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) !=
      Z_OK)
    return {};
  img.pixels.assign(stride * img.height, 0);
  for (std::size_t y = 0; y < img.height; ++y) {
    const std::uint8_t filter = raw[y * (stride + 1)];
    const std::uint8_t* in = &raw[y * (stride + 1) + 1];
    std::uint8_t* out = &img.pixels[y * stride];
    const std::uint8_t* up = y ? &img.pixels[(y - 1) * stride] : nullptr;
    for (std::size_t x = 0; x < stride; ++x) {
      const int a = x >= img.channels ? out[x - img.channels] : 0;
      const int b = up ? up[x] : 0;
      const int c = up && x >= img.channels ? up[x - img.channels] : 0;
      int predictor = 0;
      switch (filter) {
        case 1:
          predictor = a;
          break;
        case 2:
          predictor = b;
          break;
        case 3:
          predictor = (a + b) / 2;
          break;
        case 4: {
          const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default:
          break;
      }
      out[x] = static_cast<std::uint8_t>(in[x] + predictor);
    }
  }
  return img;
}

// One command per planner: the report it writes and the sections that report must hold.
struct PlannerReport {
  const char* name;
  std::string args;
  std::vector<const char*> sections;
};

std::string data(const std::string& path) { return std::string(PARAPLAN_DATA) + "/" + path; }

std::vector<PlannerReport> planner_reports() {
  return {
      {"transformer",
       "--model gpt-1.7b --devices 16 --batch 64 --pp 4 --vpp 1",
       {"Timeline (simulated iteration)", "Memory per device", "frontier", "Stages",
        "iteration time (s)", "Memory per stage (analytic, GiB)", "allocator fragmentation",
        "Runners-up", "against the chosen", "chosen plan", "Run it", "pretrain_gpt.py",
        "--tensor-model-parallel-size"}},
      {"pipeline_piper",
       data("piper/bert32a100.json") + " --devices 8 --memory 8GiB --microbatches 64",
       {"Timeline (simulated iteration)", "Memory per device", "frontier", "Stages",
        "Piper's objective"}},
      {"pipeline_dapple",
       data("dapple/vgg-19-pbs-32.txt") + " --machines 2x4 --batch 256",
       {"Timeline (simulated iteration)", "Stages", "DAPPLE's latency", "data parallelism alone"}},
      {"intra_op",
       "--model alexnet --devices 8",
       {"Timeline (simulated iteration)", "Layers", "split (dim/parts)", "Operator graph",
        "devices per layer"}},
      {"intra_op_onnx",
       data("onnx/small_cnn.onnx") + " --devices 4 --batch 32",
       {"Layers", "Operator graph", "conv2"}},
  };
}

class PlannerReports : public testing::TestWithParam<PlannerReport> {};

TEST_P(PlannerReports, AreSelfContainedAndRenderToANonBlankScreenshot) {
  const PlannerReport& p = GetParam();
  const std::string html = testing::TempDir() + "report_" + p.name + ".html";
  const std::string trace = testing::TempDir() + "trace_" + p.name + ".json";
  Outcome plan = run("plan " + p.args + " --report " + html + " --trace " + trace);
  ASSERT_EQ(plan.exit_code, 0) << plan.out;
  const std::string text = slurp(html);
  EXPECT_EQ(text.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(text.find("<svg"), std::string::npos);
  for (const char* part : p.sections) EXPECT_NE(text.find(part), std::string::npos) << part;
  for (const char* fetch : {"<script", "src=\"http", "href=\"http", "@import", "<link"})
    EXPECT_EQ(text.find(fetch), std::string::npos) << fetch;
  // The trace is the simulator's, in Chrome's format, as `simulate --trace` writes it.
  const std::string events = slurp(trace);
  EXPECT_NE(events.find("\"traceEvents\""), std::string::npos) << trace;
  EXPECT_NE(events.find("\"ph\":\"X\""), std::string::npos) << trace;
  const char* chromium = "/usr/bin/chromium";
  if (std::ifstream(chromium).fail())
    GTEST_SKIP() << "Debian's chromium is not installed (./dev installs it)";
  const std::string png = testing::TempDir() + "report_" + p.name + ".png";
  std::remove(png.c_str());
  Outcome shot = run_shell(
      std::string(chromium) +
      " --headless --no-sandbox --disable-gpu --disable-quic "
      "--no-first-run --disable-background-networking --disable-component-update "
      "--disable-sync --user-data-dir=" +
      testing::TempDir() + "chromium_" + p.name +
      " --hide-scrollbars --window-size=1200,1800 --screenshot=" + png + " file://" + html);
  const Image img = decode_png(slurp(png));
  ASSERT_GT(img.width, 0u) << shot.out;
  std::size_t ink = 0;
  std::set<std::uint32_t> colours;
  for (std::size_t i = 0; i + 2 < img.pixels.size(); i += img.channels) {
    const std::uint32_t rgb = (std::uint32_t(img.pixels[i]) << 16) |
                              (std::uint32_t(img.pixels[i + 1]) << 8) | img.pixels[i + 2];
    if (rgb != 0xffffff) ++ink;
    if (colours.size() < 64) colours.insert(rgb);
  }
  const double share = static_cast<double>(ink) / (static_cast<double>(img.width) * img.height);
  EXPECT_GT(share, 0.02) << "the screenshot is (nearly) blank";
  EXPECT_GE(colours.size(), 8u);  // text, tables and the coloured figures
}

INSTANTIATE_TEST_SUITE_P(EveryPlanner, PlannerReports, testing::ValuesIn(planner_reports()),
                         [](const testing::TestParamInfo<PlannerReport>& i) {
                           return std::string(i.param.name);
                         });

// Values that span orders of magnitude are drawn on a log axis, so none is squeezed flat.
TEST(Report, FrontierSpanningOrdersOfMagnitudeUsesALogTimeAxis) {
  const std::string html = testing::TempDir() + "report_wide.html";
  Outcome plan =
      run("plan --model llama3-8b --cluster dgx-h100 --devices 64 --batch 256 --report " + html);
  ASSERT_EQ(plan.exit_code, 0) << plan.out;
  const std::string text = slurp(html);
  EXPECT_NE(text.find("iteration time (s), log scale"), std::string::npos);
}

}  // namespace

namespace paraplan::cli {
namespace {

// The capacity line never crosses the value's label: the label starts past both.
TEST(Report, MemoryLabelsSitPastTheCapacityLine) {
  const std::string svg = render::bars_svg({{"device 0", 40, 80}}, "memory", "GiB");
  const std::regex label("<text x=\"([0-9.]+)\"[^>]*>40 GiB</text>");
  const std::regex line("<line x1=\"([0-9.]+)\"");
  std::smatch l, c;
  ASSERT_TRUE(std::regex_search(svg, l, label)) << svg;
  ASSERT_TRUE(std::regex_search(svg, c, line)) << svg;
  EXPECT_GT(std::stod(l[1]), std::stod(c[1])) << svg;
}

}  // namespace
}  // namespace paraplan::cli
