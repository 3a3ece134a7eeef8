// The bearer token of a KubeConfig: fixed, or read from a file and re-read
// whenever the file changes (projected service-account tokens rotate).
#ifndef HCUDP_SRC_KUBE_BEARER_TOKEN_H_
#define HCUDP_SRC_KUBE_BEARER_TOKEN_H_

#include <sys/types.h>

#include <ctime>
#include <string>

#include "hcudp/status.h"
#include "hcudp_internal/thread_annotations.h"

namespace hcudp::kube {

// Thread-safe.
class BearerToken {
 public:
  BearerToken(std::string fixed_token, std::string token_file);

  // The current token ("" when none is configured). With a token file, the
  // file is stat()ed on every call and re-read when its identity, size or
  // mtime changed; when a re-read fails the last good token is kept.
  StatusOr<std::string> Current();
  // Forces a re-read on the next Current() (after a 401).
  void Invalidate();
  bool from_file() const { return !token_file_.empty(); }

 private:
  const std::string fixed_token_;
  const std::string token_file_;
  Mutex mu_;  // a leaf
  std::string cached_ HCUDP_GUARDED_BY(mu_);
  bool have_cached_ HCUDP_GUARDED_BY(mu_) = false;
  ino_t inode_ HCUDP_GUARDED_BY(mu_) = 0;
  off_t size_ HCUDP_GUARDED_BY(mu_) = 0;
  timespec mtime_ HCUDP_GUARDED_BY(mu_){};
};

}  // namespace hcudp::kube

#endif  // HCUDP_SRC_KUBE_BEARER_TOKEN_H_
