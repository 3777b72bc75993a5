// The child writes one message to a pipe: a tag ('O' inferred types follow, 'E' libonnx's
// refusal follows), the payload's length as 8 bytes, the payload. A message cut short, a signal
// or a non-zero exit status means the child did not survive the inference. The child's stderr
// goes to /dev/null (a sanitizer's report of libonnx's fault is not paraplan's output), and it
// ends with _exit, running no atexit handler of the parent's.
#include "io/onnx_infer.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>

#include "io/json_fields.h"
#include "ir/error.h"

namespace paraplan::io {
namespace {

struct Outcome {
  enum Kind { kInferred, kRefused, kDied } kind = kDied;
  std::string payload;  // the inferred types (a ModelProto) or libonnx's message
  std::string death;    // how the child ended, when it died
};

void write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

[[noreturn]] void child(onnx::ModelProto& model, int prefix, int out) {
  const int null = ::open("/dev/null", O_WRONLY);
  if (null >= 0) ::dup2(null, STDERR_FILENO);
  char tag = 'O';
  std::string payload;
  try {
    auto* nodes = model.mutable_graph()->mutable_node();
    if (prefix < nodes->size()) nodes->DeleteSubrange(prefix, nodes->size() - prefix);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(false, 0, true));
    onnx::ModelProto types;
    onnx::GraphProto& g = *types.mutable_graph();
    *g.mutable_value_info() = model.graph().value_info();
    *g.mutable_input() = model.graph().input();
    *g.mutable_output() = model.graph().output();
    payload = types.SerializeAsString();
  } catch (const std::exception& e) {
    tag = 'E';
    payload = e.what();
  }
  std::string message(1, tag);
  const std::uint64_t size = payload.size();
  message.append(reinterpret_cast<const char*>(&size), sizeof size);
  message += payload;
  write_all(out, message);
  ::_exit(0);
}

/// Reads `fd` to its end or until `deadline`; false on the deadline.
bool read_until(int fd, std::chrono::steady_clock::time_point deadline, std::string& data) {
  char buffer[1 << 16];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 60000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;  // the loop's head decides whether time is up
    if (ready < 0) return true;
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    data.append(buffer, static_cast<std::size_t>(n));
  }
}

/// Inference of `model`'s first `prefix` nodes in a child process.
Outcome run_child(onnx::ModelProto& model, int prefix, double timeout_seconds) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw Error(
        ErrorKind::kInternal, "",
        fmt::format("cannot make a pipe for ONNX shape inference: {}", std::strerror(errno)));
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(
        ErrorKind::kInternal, "",
        fmt::format("cannot start a process for ONNX shape inference: {}", std::strerror(err)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child(model, prefix, fds[1]);
  }
  ::close(fds[1]);
  std::string data;
  const bool finished = read_until(
      fds[0],
      std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                             std::chrono::duration<double>(timeout_seconds)),
      data);
  ::close(fds[0]);
  if (!finished) ::kill(pid, SIGKILL);
  int status = 0;
  pid_t waited = -1;
  do waited = ::waitpid(pid, &status, 0);
  while (waited < 0 && errno == EINTR);
  if (!finished)
    throw Error(ErrorKind::kInternal, "",
                fmt::format("ONNX shape inference did not finish within {:g} s", timeout_seconds));
  Outcome out;
  std::uint64_t size = 0;
  if (data.size() >= 1 + sizeof size) std::memcpy(&size, data.data() + 1, sizeof size);
  if (data.size() >= 1 + sizeof size && data.size() - 1 - sizeof size == size &&
      (data[0] == 'O' || data[0] == 'E')) {
    out.kind = data[0] == 'O' ? Outcome::kInferred : Outcome::kRefused;
    out.payload = data.substr(1 + sizeof size);
    return out;
  }
  if (waited == pid && WIFSIGNALED(status))
    out.death = fmt::format("signal {}, {}", WTERMSIG(status), strsignal(WTERMSIG(status)));
  else if (waited == pid && WIFEXITED(status))
    out.death = fmt::format("exit status {}", WEXITSTATUS(status));
  else
    out.death = "an unknown end";
  return out;
}

}  // namespace

void infer_shapes_isolated(onnx::ModelProto& model, const std::string& path,
                           double timeout_seconds) {
  const int nodes = model.graph().node_size();
  Outcome whole = run_child(model, nodes, timeout_seconds);
  if (whole.kind == Outcome::kRefused)
    throw Error(ErrorKind::kInput, path, "ONNX shape inference failed: " + whole.payload);
  if (whole.kind == Outcome::kInferred) {
    onnx::ModelProto types;
    if (!types.ParseFromString(whole.payload))
      throw Error(ErrorKind::kInternal, path, "ONNX shape inference's result does not parse");
    onnx::GraphProto& g = *model.mutable_graph();
    *g.mutable_value_info() = types.graph().value_info();
    *g.mutable_input() = types.graph().input();
    *g.mutable_output() = types.graph().output();
    return;
  }
  if (nodes == 0)
    throw Error(
        ErrorKind::kInput, path,
        "libonnx's shape inference did not survive the graph's inputs (" + whole.death + ")");
  // The smallest prefix the child does not survive ends with the node that stops libonnx: the
  // inference visits the nodes in order, so every longer prefix dies too.
  int survived = 0, died = nodes;
  std::string death = whole.death;
  while (died - survived > 1) {
    const int mid = survived + (died - survived) / 2;
    Outcome o = run_child(model, mid, timeout_seconds);
    if (o.kind == Outcome::kDied) {
      died = mid;
      death = o.death;
    } else {
      survived = mid;
    }
  }
  const onnx::NodeProto& n = model.graph().node(died - 1);
  throw Error(
      ErrorKind::kInput, path,
      fmt::format("node {} \"{}\" ({}): libonnx's shape inference did not survive it "
                  "({}); its inputs or attributes break the operator's definition in a "
                  "way libonnx 1.12 does not check (run onnx.checker.check_model(model, "
                  "full_check=True) to see how)",
                  died - 1, utf8_or_replaced(n.name()), utf8_or_replaced(n.op_type()), death));
}

}  // namespace paraplan::io
