// SimNode lookups, loading from a file, and the default host-root.
#include "hcudp/sim_node.h"

#include <sys/stat.h>

#include <cstdlib>
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
  std::error_code ec;
  std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return NotFoundError("SimNode file " + path + ": " + ec.message());
  if (size > kMaxSimNodeBytes) {
    return InvalidArgumentError("SimNode file " + path + " is larger than 4 MiB");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("SimNode file " + path + " cannot be opened");
  std::ostringstream text;
  text << in.rdbuf();
  StatusOr<SimNode> node = ParseSimNode(text.str());
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
                static_cast<unsigned long long>(sim::Fnv1a64(abs.string())));
  return base + "/hcudp-sim-" + Sanitise(abs.stem().string()) + "-" + hash;
}

}  // namespace hcudp
