// Files that survive a crash: written, fsync-ed, and their directory entry
// fsync-ed too (internal to the vHCU manager).
#ifndef HCUDP_SRC_HAMI_DURABLE_FILE_H_
#define HCUDP_SRC_HAMI_DURABLE_FILE_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "hcudp/status.h"

namespace hcudp::internal {

// Creates `dir` and its parents with `mode` when missing (an existing
// directory keeps its mode).
Status EnsureDirectory(const std::string& dir, mode_t mode);
// Writes `content` to `path` in place (create or truncate), sets `mode`
// exactly, fsyncs the file and its directory.
Status WriteFileDurably(const std::string& path, const std::string& content, mode_t mode);
// Writes `path` atomically: `path`.tmp, fsync, rename, fsync the directory.
Status ReplaceFileDurably(const std::string& path, const std::string& content, mode_t mode);
// Like ReplaceFileDurably without the directory fsync: after a crash the
// file holds the old or the new content, never a torn one.
Status ReplaceFileAtomically(const std::string& path, const std::string& content, mode_t mode);
// Removes `path` (a missing file is OK) without syncing its directory.
Status RemoveFile(const std::string& path);
// Removes `path` (a missing file is OK) and fsyncs its directory.
Status RemoveFileDurably(const std::string& path);
// Regular file names in `dir`, sorted; a missing directory is empty.
StatusOr<std::vector<std::string>> ListFileNames(const std::string& dir);
StatusOr<std::string> ReadSmallFile(const std::string& path);
bool FileExists(const std::string& path);

}  // namespace hcudp::internal

#endif  // HCUDP_SRC_HAMI_DURABLE_FILE_H_
