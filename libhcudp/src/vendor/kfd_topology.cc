#include "vendor/kfd_topology.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <utility>

#include "backend/node_files.h"
#include "hcudp_internal/file_util.h"
#include "vendor/node_files.h"

namespace hcudp::vendor {
namespace {

// A directory name that is a plain decimal number ("12", not "012" or "x").
bool NodeNumber(const std::string& name, unsigned long* n) {
  if (name.empty() || name.size() > 9 || (name.size() > 1 && name[0] == '0')) return false;
  if (!std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  *n = std::stoul(name);
  return true;
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

StatusOr<std::vector<std::string>> ListKfdNodes(const std::string& nodes_dir) {
  HCUDP_ASSIGN_OR_RETURN(std::vector<std::string> names, node_files::ListDir(nodes_dir));
  std::vector<std::pair<unsigned long, std::string>> nodes;
  for (const std::string& name : names) {
    unsigned long n = 0;
    if (NodeNumber(name, &n)) nodes.emplace_back(n, node_files::JoinPath({nodes_dir, name}));
  }
  std::sort(nodes.begin(), nodes.end());
  std::vector<std::string> dirs;
  for (auto& [number, dir] : nodes) dirs.push_back(std::move(dir));
  return dirs;
}

std::map<std::string, int64_t> ParseKfdProperties(std::string_view text) {
  std::map<std::string, int64_t> props;
  std::istringstream lines{std::string(text)};
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string name;
    int64_t value = 0;
    if (fields >> name >> value) props.emplace(name, value);  // the first line of a name wins
  }
  return props;
}

StatusOr<std::vector<std::string>> ReadKfdGpuBdfs(const internal::HostFs& fs) {
  StatusOr<std::vector<std::string>> nodes = NotFoundError("");
  for (std::string_view candidate : kKfdTopologyDirs) {
    nodes = ListKfdNodes(fs.Path(candidate));
    if (nodes.ok()) break;
  }
  if (!nodes.ok()) {
    return NotFoundError("no KFD topology under " + fs.Path(kKfdTopologyDirs[0]) + " or " +
                         fs.Path(kKfdTopologyDirs[1]));
  }
  std::vector<std::string> bdfs;
  for (const std::string& node_dir : *nodes) {
    StatusOr<std::string> gpu_id = file_util::ReadFile(node_dir + "/gpu_id");
    if (!gpu_id.ok()) return NotFoundError(node_dir + "/gpu_id: cannot be read");
    if (std::strtoull(gpu_id->c_str(), nullptr, 10) == 0) continue;  // a CPU node
    StatusOr<std::string> text = file_util::ReadFile(node_dir + "/properties");
    if (!text.ok()) return NotFoundError(node_dir + "/properties: cannot be read");
    const std::map<std::string, int64_t> props = ParseKfdProperties(*text);
    auto domain = props.find("domain");
    auto location = props.find("location_id");
    if (domain == props.end() || location == props.end()) {
      return InvalidArgumentError(node_dir + "/properties: no domain or location_id line");
    }
    bdfs.push_back(
        BdfFromKfd(static_cast<uint64_t>(domain->second), static_cast<uint64_t>(location->second)));
  }
  return bdfs;
}

}  // namespace hcudp::vendor
