// RenderSimNode: writes the files a real node's driver would expose, under a
// host-root, and removes what a previous render wrote for cards or MIG
// instances no longer in the SimNode: only what the sim itself rendered
// (RenderManifest), never a file someone else put there. vHCU confs are
// seeded once only. The real root is refused by device and inode, so a bind
// mount of / (a DaemonSet's /host) is refused as / itself is.
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "conf/text_util.h"
#include "hcudp/sim_node.h"
#include "hcudp_internal/host_fs.h"
#include "sim/sim_files.h"
#include "sim/sim_layout.h"
#include "sim/sim_manifest.h"

namespace hcudp {
namespace {

namespace fs = std::filesystem;
using sim::RenderManifest;

std::string Hex4(unsigned v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%04x", v);
  return buf;
}

// dir + "/" + name
std::string Join(const std::string& dir, const std::string& name) {
  std::string path = dir;
  path += '/';
  path += name;
  return path;
}

// Writes a file of this render and records it in the manifest.
Status Write(RenderManifest& m, const std::string& path, const std::string& content) {
  m.Add(path);
  return sim::WriteFileIfChanged(path, content);
}

Status MakeDir(RenderManifest& m, const std::string& path) {
  m.Add(path);
  return sim::MakeDirs(path);
}

// Removes what an earlier render wrote among the entries of `dir` that are
// not in `keep`; entries the sim did not render stay.
Status Prune(RenderManifest& m, const std::string& dir, const std::set<std::string>& keep) {
  for (const std::string& name : sim::ListDir(dir)) {
    if (keep.count(name) == 0) HCUDP_RETURN_IF_ERROR(m.RemoveRendered(Join(dir, name)));
  }
  return OkStatus();
}

// InvalidArgument when `root` is the real root: the same device and inode as
// "/", whatever the path (a bind mount of / has a different name).
Status RefuseRealRoot(const std::string& host_root, const std::string& root) {
  struct stat real {
  }, here{};
  if (::stat("/", &real) != 0) return InternalError("sim: cannot stat /");
  if (::stat(root.c_str(), &here) != 0) {
    return InvalidArgumentError("sim: cannot stat host-root \"" + host_root + "\"");
  }
  if (real.st_dev == here.st_dev && real.st_ino == here.st_ino) {
    return InvalidArgumentError("sim: refusing to render into host-root \"" + host_root +
                                "\": it is the real root (same device and inode as /, e.g. "
                                "a bind mount of /)");
  }
  return OkStatus();
}

Status RenderModule(RenderManifest& m, const SimNode& node, const internal::HostFs& host) {
  std::string module = host.DriverModuleFile("hycu", "");
  HCUDP_RETURN_IF_ERROR(Write(m, module + "/initstate", "live\n"));
  HCUDP_RETURN_IF_ERROR(Write(m, module + "/version", node.driver_version + "\n"));
  std::string drivers = module + "/drivers/pci:hycu";
  std::set<std::string> bdfs;
  for (const SimCard& c : node.cards) {
    bdfs.insert(c.bdf);
    std::string drm = drivers + "/" + c.bdf + "/drm";
    std::set<std::string> nodes = {"card" + std::to_string(c.card_minor),
                                   "renderD" + std::to_string(c.render_minor)};
    for (const std::string& n : nodes) HCUDP_RETURN_IF_ERROR(MakeDir(m, Join(drm, n)));
    HCUDP_RETURN_IF_ERROR(Prune(m, drm, nodes));
  }
  return Prune(m, drivers, bdfs);
}

// A link of this render; an older render's directory at `path` goes first.
Status Link(RenderManifest& m, const std::string& path, const std::string& target) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISLNK(st.st_mode)) {
    HCUDP_RETURN_IF_ERROR(m.RemoveRendered(path));
  }
  m.Add(path);
  return sim::WriteSymlinkIfChanged(path, target);
}

// The root port a card hangs from: device 1.. and function 0..7 on the root
// complex's bus, one port per card of that root complex ("0000:00:01.0").
std::string RootPort(const std::string& pcie_root, int ordinal) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s:%s:%02x.%x", pcie_root.substr(3, 4).c_str(),
                pcie_root.substr(8, 2).c_str(), 1 + (ordinal / 8) % 31, ordinal % 8);
  return buf;
}

// As the kernel lays them out: the card's attributes in
// /sys/devices/<root complex>/<root port>/<bdf>/, and /sys/bus/pci/devices/<bdf>
// a relative link to it (the code under test resolves it for pcieRoot).
Status RenderPciDevices(RenderManifest& m, const SimNode& node, const internal::HostFs& host) {
  std::string devices = host.SysDevicesDir();
  std::string bus = host.PciDevicesDir();
  std::map<std::string, std::map<std::string, std::set<std::string>>> tree;  // root/port/bdf
  std::map<std::string, int> ports_used;
  std::set<std::string> bdfs;
  for (const SimCard& c : node.cards) {
    bdfs.insert(c.bdf);
    const std::string port = RootPort(c.pcie_root, ports_used[c.pcie_root]++);
    tree[c.pcie_root][port].insert(c.bdf);
    const std::string rel = c.pcie_root + "/" + port + "/" + c.bdf;
    std::string dir = devices + "/" + rel;
    HCUDP_RETURN_IF_ERROR(Write(m, dir + "/vendor", Hex4(sim::kHygonVendorId) + "\n"));
    HCUDP_RETURN_IF_ERROR(Write(m, dir + "/device", Hex4(c.pci_device_id) + "\n"));
    HCUDP_RETURN_IF_ERROR(Write(m, dir + "/class", "0x038000\n"));
    HCUDP_RETURN_IF_ERROR(Write(m, dir + "/numa_node", std::to_string(c.numa_node) + "\n"));
    HCUDP_RETURN_IF_ERROR(Link(m, bus + "/" + c.bdf, "../../../devices/" + rel));
  }
  std::set<std::string> roots;
  for (const auto& [pcie_root, ports] : tree) {
    roots.insert(pcie_root);
    std::set<std::string> port_names;
    for (const auto& [port, cards] : ports) {
      port_names.insert(port);
      HCUDP_RETURN_IF_ERROR(Prune(m, devices + "/" + pcie_root + "/" + port, cards));
    }
    HCUDP_RETURN_IF_ERROR(Prune(m, devices + "/" + pcie_root, port_names));
  }
  HCUDP_RETURN_IF_ERROR(Prune(m, devices, roots));
  return Prune(m, bus, bdfs);
}

Status RenderKfd(RenderManifest& m, const SimNode& node, const internal::HostFs& host) {
  std::string nodes_dir = host.KfdNodesDir();
  std::vector<sim::KfdNode> nodes = sim::KfdTopology(node);
  std::set<std::string> keep;
  for (size_t n = 0; n < nodes.size(); ++n) {
    std::string dir = nodes_dir + "/" + std::to_string(n);
    keep.insert(std::to_string(n));
    HCUDP_RETURN_IF_ERROR(Write(m, dir + "/gpu_id", std::to_string(nodes[n].gpu_id) + "\n"));
    HCUDP_RETURN_IF_ERROR(Write(m, dir + "/properties", nodes[n].properties));
  }
  return Prune(m, nodes_dir, keep);
}

Status RenderDev(RenderManifest& m, const SimNode& node, const internal::HostFs& host) {
  HCUDP_RETURN_IF_ERROR(Write(m, host.DevKfd(), ""));
  HCUDP_RETURN_IF_ERROR(Write(m, host.DevMkfd(), ""));
  std::string dri = host.DevDriDir();
  std::set<std::string> keep;
  for (const SimCard& c : node.cards) {
    for (const std::string& name :
         {"card" + std::to_string(c.card_minor), "renderD" + std::to_string(c.render_minor)}) {
      keep.insert(name);
      HCUDP_RETURN_IF_ERROR(Write(m, Join(dri, name), ""));
    }
  }
  return Prune(m, dri, keep);
}

// Seeds etc/vdev from node.vhcus once per host-root; afterwards the confs
// belong to whoever creates and destroys vHCUs.
Status SeedVhcus(const SimNode& node, const internal::HostFs& host) {
  std::string marker = sim::StateDir(host) + "/seeded";
  if (fs::exists(marker)) return OkStatus();
  sim::HostRootLock lock(host);  // another process may be seeding or changing vHCUs
  HCUDP_RETURN_IF_ERROR(lock.status());
  if (fs::exists(marker)) return OkStatus();
  HCUDP_RETURN_IF_ERROR(sim::MakeDirs(host.VdevDir()));
  for (const auto& [id, conf] : sim::SeedVdevConfs(node)) {
    HCUDP_RETURN_IF_ERROR(sim::WriteFileIfChanged(host.VdevConf(id), FormatVdevConf(conf)));
  }
  return sim::WriteFileIfChanged(marker, "vHCUs of the SimNode written to etc/vdev\n");
}

Status RenderMig(RenderManifest& m, const SimNode& node, const internal::HostFs& host) {
  std::string mig_dir = host.MigConfigDir();
  std::string ci_dir = host.MigCiDir();
  if (!node.mig_enabled) return m.RemoveRendered(mig_dir);
  std::set<std::string> keep = {"ci"};
  for (const SimCard& c : node.cards) {
    std::string name = "dev" + std::to_string(c.index);
    keep.insert(name);
    HCUDP_RETURN_IF_ERROR(Write(m, Join(mig_dir, name), c.bdf + "\n"));
  }
  HCUDP_RETURN_IF_ERROR(Prune(m, mig_dir, keep));
  HCUDP_RETURN_IF_ERROR(MakeDir(m, ci_dir));
  std::set<std::string> confs;
  for (const auto& [name, conf] : sim::MigConfs(node)) {
    confs.insert(name);
    HCUDP_RETURN_IF_ERROR(Write(m, Join(ci_dir, name), FormatMigConf(conf)));
  }
  return Prune(m, ci_dir, confs);
}

}  // namespace

Status RenderSimNode(const SimNode& node, const std::string& host_root) {
  if (host_root.empty())
    return InvalidArgumentError("sim: refusing to render into an empty host-root");
  std::error_code ec;
  fs::path resolved = fs::weakly_canonical(fs::absolute(host_root, ec), ec);
  if (ec || resolved.empty() || resolved == resolved.root_path()) {
    return InvalidArgumentError("sim: refusing to render into host-root \"" + host_root +
                                "\" (it is, or resolves to, /)");
  }
  std::string root = resolved.string();
  HCUDP_RETURN_IF_ERROR(sim::MakeDirs(root));
  HCUDP_RETURN_IF_ERROR(RefuseRealRoot(host_root, root));
  const internal::HostFs host(root);
  RenderManifest m(host);
  HCUDP_RETURN_IF_ERROR(RenderModule(m, node, host));
  HCUDP_RETURN_IF_ERROR(RenderPciDevices(m, node, host));
  HCUDP_RETURN_IF_ERROR(RenderKfd(m, node, host));
  HCUDP_RETURN_IF_ERROR(RenderDev(m, node, host));
  HCUDP_RETURN_IF_ERROR(SeedVhcus(node, host));
  HCUDP_RETURN_IF_ERROR(RenderMig(m, node, host));
  return m.Save();
}

}  // namespace hcudp
