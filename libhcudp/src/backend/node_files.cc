#include "backend/node_files.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace hcudp::node_files {
namespace fs = std::filesystem;

std::string JoinPath(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view part : parts) {
    if (!out.empty()) out += '/';
    out += part;
  }
  return out;
}

StatusOr<std::vector<std::string>> ListDir(const std::string& path) {
  std::error_code ec;
  fs::directory_iterator it(path, ec);
  if (ec) {
    std::string message = "cannot list " + path + ": " + ec.message();
    if (ec == std::errc::no_such_file_or_directory) return NotFoundError(message);
    return InternalError(message);
  }
  std::vector<std::string> names;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  if (ec) return InternalError("cannot list " + path + ": " + ec.message());
  std::sort(names.begin(), names.end());
  return names;
}

bool Exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

bool IsDirectory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

bool IsRegularFile(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

Status RemoveFile(const std::string& path) {
  std::error_code ec;
  fs::remove(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return InternalError("cannot remove " + path + ": " + ec.message());
  }
  return OkStatus();
}

}  // namespace hcudp::node_files
