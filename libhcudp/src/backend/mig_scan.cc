#include "backend/mig_scan.h"

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include "backend/node_files.h"
#include "hcudp/backend.h"
#include "hcudp/mig_conf.h"
#include "hcudp_internal/file_util.h"
#include "hcudp_internal/log.h"
#include "vendor/kfd_topology.h"

namespace hcudp {
namespace {

std::optional<int64_t> ParseDecimal(const std::string& text) {
  std::istringstream in(text);
  int64_t v = 0;
  if (!(in >> v)) return std::nullopt;
  return v;
}

StatusOr<MigInstance> ReadMigInstance(const internal::HostFs& fs, const std::string& name,
                                      int shader_engines) {
  const std::string host_path = internal::host_path::MigCiConf(name);
  const std::string file = fs.Path(host_path);
  HCUDP_ASSIGN_OR_RETURN(MigConfName parts, ParseMigConfFileName(name));
  if (node_files::IsDirectory(file)) {
    return FailedPreconditionError(file +
                                   " is a directory, not a CI conf (left by a runtime "
                                   "that mounted a vanished conf; remove it)");
  }
  HCUDP_ASSIGN_OR_RETURN(std::string text, file_util::ReadFile(file));
  StatusOr<MigConf> conf = ParseMigConf(text);
  if (!conf.ok()) return conf.status().WithContext(file);

  MigInstance mig;
  mig.card = parts.card;
  mig.card_bdf = conf->ci.pci;
  mig.gpu_instance = conf->ci.gi_id;
  mig.compute_instance = conf->ci.id;
  mig.profile = MigProfileName(shader_engines, conf->gi.gpu_slice_count, conf->ci.gpu_slice_count,
                               conf->gi.memory_size_mb);
  mig.compute_units = conf->ci.cu_count;
  mig.memory_mib = conf->gi.memory_size_mb;
  mig.uuid = conf->ci.mig_uuid;
  mig.conf_path = host_path;
  return mig;
}

}  // namespace

StatusOr<int> ReadShaderEngineCount(const internal::HostFs& fs) {
  const std::string dir = fs.KfdNodesDir();
  HCUDP_ASSIGN_OR_RETURN(std::vector<std::string> nodes, vendor::ListKfdNodes(dir));
  for (const std::string& node : nodes) {
    auto gpu_id = file_util::ReadFile(node_files::JoinPath({node, "gpu_id"}));
    if (!gpu_id.ok() || ParseDecimal(*gpu_id).value_or(0) == 0) continue;
    const std::string path = node_files::JoinPath({node, "properties"});
    HCUDP_ASSIGN_OR_RETURN(std::string text, file_util::ReadFile(path));
    std::map<std::string, int64_t> props = vendor::ParseKfdProperties(text);
    int64_t arrays = props.count("array_count") ? props["array_count"] : 0;
    int64_t per_engine =
        props.count("simd_arrays_per_engine") ? props["simd_arrays_per_engine"] : 0;
    if (arrays <= 0 || per_engine <= 0) {
      return InternalError(path + ": array_count and simd_arrays_per_engine must be positive");
    }
    return static_cast<int>(arrays / per_engine);
  }
  return NotFoundError("no GPU node (gpu_id != 0) under " + dir);
}

std::vector<MigInstance> ScanMigInstances(const internal::HostFs& fs,
                                          std::vector<MigStateGap>* gaps) {
  std::vector<MigInstance> instances;
  const std::string dir = fs.MigCiDir();
  auto gap = [gaps](std::string path, std::string reason) {
    if (gaps != nullptr) {
      gaps->push_back({std::move(path), std::move(reason), UnknownReason::kMigConfUnreadable});
    }
  };
  auto names = node_files::ListDir(dir);
  if (!names.ok()) {
    // No directory: no instance was made yet. Any other error hides them.
    if (names.status().code() != StatusCode::kNotFound) gap(dir, names.status().message());
    LOG(WARNING) << "MIG mode is on but " << names.status().message();
    return instances;
  }
  std::vector<std::string> confs;
  for (const std::string& name : *names) {
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".conf") == 0) confs.push_back(name);
  }
  if (confs.empty()) return instances;
  StatusOr<int> shader_engines = ReadShaderEngineCount(fs);
  if (!shader_engines.ok()) {
    LOG(WARNING) << "skipping all MIG instances: cannot name their profiles without the KFD "
                    "shader-engine count: "
                 << shader_engines.status().message();
    gap(fs.KfdNodesDir(),
        "cannot name MIG instances: " + shader_engines.status().message());
    return instances;
  }
  for (const std::string& name : confs) {
    StatusOr<MigInstance> mig = ReadMigInstance(fs, name, *shader_engines);
    if (!mig.ok()) {
      LOG(WARNING) << "skipping MIG instance " << name << ": " << mig.status().message();
      // A directory at a conf's path is a runtime's leftover and a name of
      // another form a stranger, not instances; a conf that does not read
      // may be one.
      if (ParseMigConfFileName(name).ok() && !node_files::IsDirectory(dir + "/" + name)) {
        gap(dir + "/" + name, mig.status().message());
      }
      continue;
    }
    instances.push_back(std::move(*mig));
  }
  std::sort(instances.begin(), instances.end(), [](const MigInstance& a, const MigInstance& b) {
    return std::tie(a.card, a.gpu_instance, a.compute_instance) <
           std::tie(b.card, b.gpu_instance, b.compute_instance);
  });
  return instances;
}

}  // namespace hcudp
