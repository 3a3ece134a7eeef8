#include "vendor/kfd_topology.h"

#include <dirent.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

#include "vendor/node_files.h"

namespace hcudp::vendor {
namespace {

bool ReadAll(const std::string& path, std::string* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

// A directory name that is a plain decimal number ("12", not "012" or "x").
bool NodeNumber(const std::string& name, unsigned long* n) {
  if (name.empty() || name.size() > 9 || (name.size() > 1 && name[0] == '0')) return false;
  if (!std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  *n = std::stoul(name);
  return true;
}

bool Property(const std::string& text, const std::string& key, uint64_t* value) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string name;
    unsigned long long v = 0;
    if (fields >> name && name == key && fields >> v) {
      *value = v;
      return true;
    }
  }
  return false;
}

}  // namespace

std::string BdfFromKfd(uint64_t domain, uint64_t location_id) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04x:%02x:%02x.%x", static_cast<unsigned>(domain & 0xffff),
                static_cast<unsigned>((location_id >> 8) & 0xff),
                static_cast<unsigned>((location_id >> 3) & 0x1f),
                static_cast<unsigned>(location_id & 0x7));
  return buf;
}

StatusOr<std::vector<std::string>> ReadKfdGpuBdfs(const std::string& host_root) {
  std::string dir;
  DIR* d = nullptr;
  for (const char* candidate : kKfdTopologyDirs) {
    dir = UnderRoot(host_root, candidate);
    d = opendir(dir.c_str());
    if (d != nullptr) break;
  }
  if (d == nullptr) {
    return NotFoundError("no KFD topology under " + UnderRoot(host_root, kKfdTopologyDirs[0]) +
                         " or " + UnderRoot(host_root, kKfdTopologyDirs[1]));
  }
  std::vector<std::pair<unsigned long, std::string>> nodes;
  while (dirent* e = readdir(d)) {
    unsigned long n = 0;
    if (NodeNumber(e->d_name, &n)) nodes.emplace_back(n, e->d_name);
  }
  closedir(d);
  std::sort(nodes.begin(), nodes.end());
  std::vector<std::string> bdfs;
  for (const auto& [number, name] : nodes) {
    const std::string node_dir = dir + "/" + name;
    std::string gpu_id;
    if (!ReadAll(node_dir + "/gpu_id", &gpu_id)) {
      return NotFoundError(node_dir + "/gpu_id: cannot be read");
    }
    if (std::strtoull(gpu_id.c_str(), nullptr, 10) == 0) continue;  // a CPU node
    std::string props;
    if (!ReadAll(node_dir + "/properties", &props)) {
      return NotFoundError(node_dir + "/properties: cannot be read");
    }
    uint64_t domain = 0, location = 0;
    if (!Property(props, "domain", &domain) || !Property(props, "location_id", &location)) {
      return InvalidArgumentError(node_dir + "/properties: no domain or location_id line");
    }
    bdfs.push_back(BdfFromKfd(domain, location));
  }
  return bdfs;
}

}  // namespace hcudp::vendor
