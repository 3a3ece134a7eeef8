#include "hcudp_internal/path_watcher.h"

#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "hcudp_internal/file_util.h"
#include "hcudp_internal/log.h"

namespace hcudp {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kDirMask = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE |
                              IN_MODIFY | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;

// The watched directory itself went away or changed identity: re-arm.
constexpr uint32_t kSelfGone = IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT;

std::vector<std::string> Normalise(std::vector<std::string> paths) {
  for (std::string& p : paths) {
    std::error_code ec;
    fs::path abs = fs::absolute(p, ec);
    std::string norm = (ec ? fs::path(p) : abs).lexically_normal().string();
    while (norm.size() > 1 && norm.back() == '/') norm.pop_back();
    p = norm;
  }
  return paths;
}

bool IsDir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

PathWatcher::PathWatcher(std::vector<std::string> paths) : paths_(Normalise(std::move(paths))) {}

PathWatcher::~PathWatcher() {
  if (fd_ >= 0) ::close(fd_);
}

Status PathWatcher::Open() {
  fd_ = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (fd_ < 0) return InternalError(std::string("inotify: ") + std::strerror(errno));
  Arm();
  return OkStatus();
}

void PathWatcher::Arm() {
  std::map<int, Watch> next;
  for (const std::string& path : paths_) {
    // "/", "/a", "/a/b", ... down to the deepest existing directory.
    std::vector<std::string> chain;
    std::vector<std::string> names;  // names[i]: the component below chain[i]
    std::string prefix;
    for (const fs::path& part : fs::path(path)) {
      std::string name = part.string();
      if (name == "/") {
        prefix = "/";
      } else {
        if (!chain.empty()) names.push_back(name);
        prefix = prefix == "/" ? "/" + name : prefix + "/" + name;
      }
      if (!IsDir(prefix)) break;
      chain.push_back(prefix);
    }
    for (size_t i = 0; i < chain.size(); ++i) {
      int wd = ::inotify_add_watch(fd_, chain[i].c_str(), kDirMask);
      if (wd < 0) {
        VLOG(1) << "not watching " << chain[i] << " (for " << path << "): " << std::strerror(errno);
        continue;
      }
      Watch& w = next[wd];
      w.dir = chain[i];
      // The path itself, when it is a directory: any entry counts.
      w.filters.push_back(Filter{i < names.size() ? names[i] : std::string()});
    }
    if (chain.empty() || chain.back() != path) {
      VLOG(1) << path << " is not a directory now; watching "
              << (chain.empty() ? "nothing" : chain.back()) << " for it";
    }
  }
  for (const auto& [wd, watch] : watches_) {
    if (next.count(wd) == 0) ::inotify_rm_watch(fd_, wd);
  }
  watches_ = std::move(next);
}

bool PathWatcher::Counts(const Watch& watch, const std::string& name) const {
  if (name.empty()) return true;  // the directory itself changed
  // The hidden temp file of an atomic write (file_util::WriteFileAtomic,
  // e.g. the sim's vHCU confs): only its rename to the real name counts.
  if (name[0] == '.' && name.size() > file_util::kTempSuffix.size() &&
      name.compare(name.size() - file_util::kTempSuffix.size(), std::string::npos,
                   file_util::kTempSuffix) == 0) {
    return false;
  }
  for (const Filter& f : watch.filters) {
    if (f.name.empty() || f.name == name) return true;
  }
  return false;
}

bool PathWatcher::ReadEvents() {
  if (fd_ < 0) return false;
  bool counts = false;
  alignas(inotify_event) char buf[8192];
  ssize_t len;
  while ((len = ::read(fd_, buf, sizeof buf)) > 0) {
    for (char* p = buf; p < buf + len;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(p);
      p += sizeof(inotify_event) + ev->len;
      if (ev->mask & IN_Q_OVERFLOW) {
        counts = true;  // events were lost: look at everything again
        continue;
      }
      auto it = watches_.find(ev->wd);
      if (it == watches_.end()) continue;  // a watch we have removed
      if (ev->mask & kSelfGone) {
        counts = true;
        continue;
      }
      if (Counts(it->second, ev->len > 0 ? ev->name : "")) counts = true;
    }
  }
  if (counts) Arm();
  return counts;
}

std::vector<std::string> PathWatcher::WatchedDirs() const {
  std::vector<std::string> dirs;
  for (const auto& [wd, watch] : watches_) dirs.push_back(watch.dir);
  return dirs;
}

}  // namespace hcudp
