// PathWatcher: inotify on a set of paths that may not exist yet, may be
// deleted, or may be replaced (by rename) while the process runs.
//
// For each path P (a directory whose entries matter, or a file):
//   - when P is an existing directory, every change of an entry in P counts;
//   - otherwise the deepest existing ancestor D of P is watched, and only
//     events for the next component of P below D count (the file itself, or
//     the directory that will lead to P);
//   - every ancestor of D up to / is watched for the one name that leads to
//     P, so a rename or removal higher up (a host-root moved away and back)
//     is seen too.
// Filters are per watch: an event counts only for the path it was armed
// for; the hidden "*.tmp" file of an atomic write never counts (its rename
// does). After any event that counts (and when a watched directory itself is
// deleted, moved or unmounted, or the queue overflows) the watches are
// re-armed from the paths as they are now, so a directory that appears is
// watched from then on and a replaced one is watched again.
//
// Thread-safety: one thread uses a PathWatcher (the node watcher's, the DRA
// plugin's poller).
#ifndef HCUDP_INTERNAL_PATH_WATCHER_H_
#define HCUDP_INTERNAL_PATH_WATCHER_H_

#include <map>
#include <string>
#include <vector>

#include "hcudp/status.h"

namespace hcudp {

class PathWatcher {
 public:
  explicit PathWatcher(std::vector<std::string> paths);
  ~PathWatcher();
  PathWatcher(const PathWatcher&) = delete;
  PathWatcher& operator=(const PathWatcher&) = delete;

  // Creates the inotify instance and arms the watches. An error means no
  // events at all (inotify unavailable); the caller falls back to polling.
  Status Open();
  // The descriptor to poll for POLLIN; -1 before a successful Open().
  int fd() const { return fd_; }

  // Reads every pending event (non-blocking). Returns true when any of them
  // concerns a watched path; the watches are then re-armed.
  bool ReadEvents();

  // The directories watched now, for tests and diagnostics.
  std::vector<std::string> WatchedDirs() const;

 private:
  struct Filter {
    std::string name;  // the entry name that counts; "" = any entry
  };
  struct Watch {
    std::string dir;
    std::vector<Filter> filters;
  };

  void Arm();
  bool Counts(const Watch& watch, const std::string& name) const;

  const std::vector<std::string> paths_;  // absolute, normalised
  int fd_ = -1;
  std::map<int, Watch> watches_;  // by watch descriptor
};

}  // namespace hcudp

#endif  // HCUDP_INTERNAL_PATH_WATCHER_H_
