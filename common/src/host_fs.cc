#include "hcudp_internal/host_fs.h"

#include <filesystem>
#include <system_error>

namespace hcudp::internal {
namespace host_path {
namespace {

std::string Join(std::string_view dir, std::string_view name) {
  std::string out(dir);
  out += '/';
  out += name;
  return out;
}

}  // namespace

std::string VdevConf(int id) { return Join(kVdevDir, "vdev" + std::to_string(id) + ".conf"); }

std::string Mark(std::string_view name) { return Join(kMarkDir, name); }

std::string MigCiConf(std::string_view name) { return Join(kMigCiDir, name); }

std::string DriverModuleFile(std::string_view module, std::string_view attribute) {
  std::string out = Join(kSysModuleDir, module);
  if (!attribute.empty()) out = Join(out, attribute);
  return out;
}

std::string PciDevice(std::string_view bdf) { return Join(kPciDevicesDir, bdf); }

std::string DevDri(std::string_view node) { return Join(kDevDriDir, node); }

}  // namespace host_path

HostFs::HostFs(std::string_view root) {
  std::string given(root);
  if (!given.empty() && given.front() != '/') {
    std::error_code ec;
    std::filesystem::path absolute = std::filesystem::absolute(given, ec);
    // Without a working directory the root stays as given (relative): the
    // paths still name the files the caller meant while it does not chdir.
    if (!ec) given = absolute.lexically_normal().string();
  }
  while (!given.empty() && given.back() == '/') given.pop_back();
  root_ = std::move(given);
  display_root_ = root_.empty() ? std::string("/") : root_;
}

std::string JoinUnder(std::string_view dir, std::string_view path) {
  while (!dir.empty() && dir.back() == '/') dir.remove_suffix(1);
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  std::string out(dir);
  out += '/';
  out += path;
  return out;
}

std::string HostFs::Path(std::string_view host_path) const { return JoinUnder(root_, host_path); }

StatusOr<std::string> HostFs::ReadFile(std::string_view host_path, size_t max_bytes) const {
  return file_util::ReadFile(Path(host_path), max_bytes);
}

StatusOr<std::string> HostFs::ReadRegularFile(std::string_view host_path,
                                              size_t max_bytes) const {
  return file_util::ReadRegularFile(Path(host_path), max_bytes);
}

Status HostFs::WriteFileAtomic(std::string_view host_path, std::string_view data, mode_t mode,
                               file_util::Durability durability) const {
  return file_util::WriteFileAtomic(Path(host_path), data, mode, durability);
}

Status HostFs::MakeDirs(std::string_view host_path, mode_t mode,
                        file_util::Durability durability) const {
  return file_util::MakeDirs(Path(host_path), mode, durability);
}

Status HostFs::RemoveFile(std::string_view host_path, file_util::Durability durability) const {
  return file_util::RemoveFile(Path(host_path), durability);
}

}  // namespace hcudp::internal
