// The library's one file module: whole-file reads with a size limit, atomic
// (and, when asked, durable) writes, and "mkdir -p" with a mode. Every other
// part of libhcudp and the daemon reads and writes files through these, so
// that the choices below are made once:
//   - ReadFile stops at `max_bytes` and fails (naming the path and the limit)
//     instead of truncating; a path like /dev/zero ends in an error.
//   - WriteFileAtomic writes a temp file with a unique name in the target's
//     directory (".<name>.<pid>.<n>.tmp": hidden, unique per process and
//     write, and ending in kTempSuffix so that a crash leftover is
//     recognisable), opened with
//     O_CREAT|O_EXCL|O_NOFOLLOW so a planted symlink is never followed, sets
//     `mode` exactly (whatever the umask), then renames it over the target.
//     Durability says how much is fsync-ed.
//   - MakeDirs creates missing directories with `mode` exactly; existing ones
//     keep theirs.
// Internal (the static library hcudp_internal_files, linked by libhcudp and
// the daemon), not installed.
#ifndef HCUDP_INTERNAL_FILE_UTIL_H_
#define HCUDP_INTERNAL_FILE_UTIL_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hcudp/status.h"

namespace hcudp::file_util {

// The suffix of every temp file WriteFileAtomic makes.
inline constexpr std::string_view kTempSuffix = ".tmp";

// A limit for small text files (configs, credentials, sysfs attributes).
inline constexpr size_t kSmallFileMaxBytes = size_t{1} << 20;

enum class Durability {
  // rename only: readers never see a torn file, a crash may lose the write
  // (simulated nodes, whose files need not survive a power cut).
  kNoSync,
  // fsync the file before the rename: after a crash the target holds the old
  // or the new content, never a torn one; the rename itself may be lost.
  kSyncFile,
  // kSyncFile plus an fsync of the directory after the rename (and, for
  // MakeDirs, of each new directory's parent): the write survives a crash.
  kSyncFileAndDirectory,
};

// The whole file. NotFound when absent, PermissionDenied when not readable,
// InvalidArgument ("<path>: larger than <max_bytes> bytes") past the limit,
// Internal on other errors. Messages name the path, never the content.
StatusOr<std::string> ReadFile(const std::string& path, size_t max_bytes = kSmallFileMaxBytes);

// ReadFile for a file that someone else may have replaced with anything:
// only a regular file is ever read. The path is not followed if it is a
// symbolic link, is opened non-blocking (a FIFO or device never blocks the
// caller) and checked again on what was opened (fstat), so a swap between
// the checks is caught too. FailedPrecondition "<path>: a FIFO, not a
// regular file" (a directory, a symbolic link, a device, a socket) when it
// is not one; otherwise the errors of ReadFile.
StatusOr<std::string> ReadRegularFile(const std::string& path,
                                      size_t max_bytes = kSmallFileMaxBytes);

// Replaces `path` with `data` atomically (see above). On failure the temp
// file is removed and `path` is unchanged.
Status WriteFileAtomic(const std::string& path, std::string_view data, mode_t mode,
                       Durability durability);

// Writes `path` in place (create or truncate), sets `mode` exactly, with the
// fsyncs `durability` asks for (kNoSync: a crash may leave the file missing
// or empty). For files whose only content that matters is their existence
// (mark files); a crash may leave them empty.
Status WriteFileInPlace(const std::string& path, std::string_view data, mode_t mode,
                        Durability durability);

// "mkdir -p": creates `path` and missing parents with `mode` exactly;
// FailedPrecondition when `path` (or a parent) exists and is not a directory.
// kSyncFileAndDirectory fsyncs the parent of each directory created.
Status MakeDirs(const std::string& path, mode_t mode, Durability durability = Durability::kNoSync);

// Removes a file; a missing one is OK. kSyncFileAndDirectory fsyncs the
// directory after a removal.
Status RemoveFile(const std::string& path, Durability durability = Durability::kNoSync);

// Names of the regular files in `dir` (following symlinks), sorted; a missing
// directory is empty.
StatusOr<std::vector<std::string>> ListFileNames(const std::string& dir);

// The directory part of `path` ("." for a bare name, "/" for "/x").
std::string ParentDir(const std::string& path);

// fsyncs directory `dir`.
Status SyncDirectory(const std::string& dir);

// For tests: the temp path the next WriteFileAtomic of `path` in this process
// tries first (the name sequence is per process; a name that exists is
// skipped, never opened).
std::string NextTempPathForTesting(const std::string& path);

}  // namespace hcudp::file_util

#endif  // HCUDP_INTERNAL_FILE_UTIL_H_
