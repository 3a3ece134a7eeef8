// SimNode lookups, loading from a file, and the default host-root.
#include "hcudp/sim_node.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/sim_layout.h"

namespace hcudp {
namespace {

constexpr std::uintmax_t kMaxSimNodeBytes = 4 << 20;  // a SimNode is a few KiB

std::string Sanitise(std::string_view s) {
  std::string out;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.';
    out.push_back(ok ? c : '_');
    if (out.size() == 40) break;
  }
  return out.empty() ? "node" : out;
}

}  // namespace

const SimCard* SimNode::FindCard(int index) const {
  for (const SimCard& c : cards) {
    if (c.index == index) return &c;
  }
  return nullptr;
}

SimLinkSpec SimNode::LinkBetween(int a, int b) const {
  for (const SimLinkPair& p : link_pairs) {
    if ((p.a == a && p.b == b) || (p.a == b && p.b == a)) return p.spec;
  }
  return link_default;
}

StatusOr<SimNode> LoadSimNode(const std::string& path) {
  // One open, non-blocking, and every check made on what was opened: a FIFO
  // or device swapped in after a check on the path must not block the
  // caller (the node watcher's thread), nor must one there from the start.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    std::string message = "SimNode file " + path + ": " + std::strerror(err);
    return InvalidArgumentError(std::move(message));  // the file the user named
  }
  struct stat st {};
  std::string text;
  Status problem;
  if (::fstat(fd, &st) != 0) {
    problem = NotFoundError("SimNode file " + path + ": " + std::strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    problem = InvalidArgumentError("SimNode file " + path + ": not a regular file");
  } else if (static_cast<std::uintmax_t>(st.st_size) > kMaxSimNodeBytes) {
    problem = InvalidArgumentError("SimNode file " + path + " is larger than 4 MiB");
  } else {
    char buf[65536];
    while (problem.ok()) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        problem = NotFoundError("SimNode file " + path + ": " + std::strerror(errno));
      } else if (n == 0) {
        break;
      } else if (text.size() + static_cast<size_t>(n) > kMaxSimNodeBytes) {
        problem = InvalidArgumentError("SimNode file " + path + " is larger than 4 MiB");
      } else {
        text.append(buf, static_cast<size_t>(n));
      }
    }
  }
  ::close(fd);
  if (!problem.ok()) return problem;
  StatusOr<SimNode> node = ParseSimNode(text);
  if (!node.ok()) return node.status().WithContext(path);
  return node;
}

std::string DefaultSimHostRoot(const std::string& sim_node_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path abs = fs::weakly_canonical(fs::absolute(sim_node_path, ec), ec);
  if (ec) abs = fs::absolute(sim_node_path, ec).lexically_normal();
  const char* tmp = std::getenv("TMPDIR");
  std::string base = (tmp != nullptr && *tmp == '/') ? tmp : "/tmp";
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(Fnv1a64(abs.string())));
  return base + "/hcudp-sim-" + Sanitise(abs.stem().string()) + "-" + hash;
}

}  // namespace hcudp
