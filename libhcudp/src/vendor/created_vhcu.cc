#include "vendor/created_vhcu.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "backend/node_files.h"
#include "hcudp_internal/file_util.h"
#include "vendor/node_files.h"

namespace hcudp::vendor {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

std::map<int, VdevConf> ReadVdevConfs(const internal::HostFs& fs) {
  std::map<int, VdevConf> out;
  const std::string dir = fs.VdevDir();
  StatusOr<std::vector<std::string>> names = node_files::ListDir(dir);
  if (!names.ok()) return out;
  for (const std::string& name : *names) {
    StatusOr<int> id = ParseVdevConfFileName(name);
    const std::string path = node_files::JoinPath({dir, name});
    if (!id.ok() || !node_files::IsRegularFile(path)) continue;
    StatusOr<std::string> text = file_util::ReadFile(path);
    if (!text.ok()) continue;
    StatusOr<VdevConf> conf = ParseVdevConf(*text);
    if (conf.ok()) out[*id] = *conf;
  }
  return out;
}

StatusOr<int> FindCreatedVhcu(const std::map<int, VdevConf>& before,
                              const std::map<int, VdevConf>& after, const std::string& bdf,
                              int compute_units, uint64_t memory_mib,
                              const internal::HostFs& fs) {
  std::vector<int> sized;  // new confs (or ids now on another card) of exactly this size
  std::vector<int> ours;   // ... of them, those on card `bdf`
  for (const auto& [id, conf] : after) {
    auto old = before.find(id);
    if (old != before.end() && Lower(old->second.pci_bus_id) == Lower(conf.pci_bus_id)) continue;
    if (conf.cu_count != compute_units || conf.mem_mib != memory_mib) continue;
    sized.push_back(id);
    if (Lower(conf.pci_bus_id) == Lower(bdf)) ours.push_back(id);
  }
  const std::string what = "a vHCU of " + std::to_string(compute_units) + " CU, " +
                           std::to_string(memory_mib) + " MiB on " + bdf;
  if (ours.empty()) {
    // None on the requested card. When exactly one new conf of exactly this
    // size appeared on another card, the driver put ours there (a wrong
    // card map): report it, so the caller sees the PciBusId mismatch and
    // removes what it just made instead of leaking it.
    if (sized.size() == 1) return sized.front();
    return InternalError("the driver accepted " + what + " but no new vdev<N>.conf of that card " +
                         "and size appeared in " + fs.VdevDir());
  }
  if (ours.size() > 1) {
    std::string ids;
    for (int id : ours) ids += " vdev" + std::to_string(id);
    return AbortedError("created " + what + " but" + ids +
                        " all appeared at once (another creator did not take the host-wide vHCU "
                        "lock); cannot tell which is ours");
  }
  return ours.front();
}

}  // namespace hcudp::vendor
