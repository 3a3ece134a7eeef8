// The vHCU journal's and mark files' file operations, named for what the
// vHCU manager needs (internal). Each is one choice of the library's file
// module (hcudp_internal/file_util.h), which does the work; new code calls that
// module directly.
#ifndef HCUDP_SRC_HAMI_DURABLE_FILE_H_
#define HCUDP_SRC_HAMI_DURABLE_FILE_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "hcudp/status.h"
#include "hcudp_internal/file_util.h"

namespace hcudp::internal {

// Creates `dir` and its parents with `mode` when missing (an existing
// directory keeps its mode), fsyncing each new directory's parent.
inline Status EnsureDirectory(const std::string& dir, mode_t mode) {
  return file_util::MakeDirs(dir, mode, file_util::Durability::kSyncFileAndDirectory);
}
// Writes `content` to `path` in place (create or truncate), sets `mode`
// exactly, fsyncs the file and its directory.
inline Status WriteFileDurably(const std::string& path, const std::string& content, mode_t mode) {
  return file_util::WriteFileInPlaceDurably(path, content, mode);
}
// Writes `path` atomically (a unique "*.tmp" temp file in its directory,
// fsync, rename) and fsyncs the directory.
inline Status ReplaceFileDurably(const std::string& path, const std::string& content, mode_t mode) {
  return file_util::WriteFileAtomic(path, content, mode,
                                    file_util::Durability::kSyncFileAndDirectory);
}
// Like ReplaceFileDurably without the directory fsync: after a crash the
// file holds the old or the new content, never a torn one.
inline Status ReplaceFileAtomically(const std::string& path, const std::string& content,
                                    mode_t mode) {
  return file_util::WriteFileAtomic(path, content, mode, file_util::Durability::kSyncFile);
}
// Removes `path` (a missing file is OK) without syncing its directory.
inline Status RemoveFile(const std::string& path) { return file_util::RemoveFile(path); }
// Removes `path` (a missing file is OK) and fsyncs its directory.
inline Status RemoveFileDurably(const std::string& path) {
  return file_util::RemoveFile(path, file_util::Durability::kSyncFileAndDirectory);
}
// Regular file names in `dir`, sorted; a missing directory is empty.
inline StatusOr<std::vector<std::string>> ListFileNames(const std::string& dir) {
  return file_util::ListFileNames(dir);
}
// The whole file; InvalidArgument past 1 MiB (journal records and mark files
// are a few hundred bytes).
inline StatusOr<std::string> ReadSmallFile(const std::string& path) {
  return file_util::ReadFile(path, file_util::kSmallFileMaxBytes);
}
bool FileExists(const std::string& path);

}  // namespace hcudp::internal

#endif  // HCUDP_SRC_HAMI_DURABLE_FILE_H_
