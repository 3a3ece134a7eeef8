#include "kube/bearer_token.h"

#include <sys/stat.h>

#include "hcudp_internal/file_util.h"

namespace hcudp::kube {
namespace {

std::string Trim(std::string s) {
  size_t end = s.find_last_not_of(" \t\r\n");
  s.erase(end == std::string::npos ? 0 : end + 1);
  size_t begin = s.find_first_not_of(" \t\r\n");
  s.erase(0, begin == std::string::npos ? s.size() : begin);
  return s;
}

}  // namespace

BearerToken::BearerToken(std::string fixed_token, std::string token_file)
    : fixed_token_(std::move(fixed_token)), token_file_(std::move(token_file)) {}

void BearerToken::Invalidate() {
  MutexLock lock(mu_);
  have_cached_ = false;
}

StatusOr<std::string> BearerToken::Current() {
  if (token_file_.empty()) return fixed_token_;
  MutexLock lock(mu_);
  struct stat st {};
  if (stat(token_file_.c_str(), &st) != 0) {
    if (have_cached_) return cached_;
    return UnavailableError("token file " + token_file_ + " unreadable");
  }
  bool changed = !have_cached_ || st.st_ino != inode_ || st.st_size != size_ ||
                 st.st_mtim.tv_sec != mtime_.tv_sec || st.st_mtim.tv_nsec != mtime_.tv_nsec;
  if (!changed) return cached_;
  StatusOr<std::string> text = file_util::ReadFile(token_file_);
  if (!text.ok()) {
    if (have_cached_) return cached_;
    return text.status().WithContext("token file");
  }
  std::string token = Trim(std::move(text).value());
  if (token.empty()) {
    if (have_cached_) return cached_;
    return UnavailableError("token file " + token_file_ + " is empty");
  }
  cached_ = std::move(token);
  have_cached_ = true;
  inode_ = st.st_ino;
  size_ = st.st_size;
  mtime_ = st.st_mtim;
  return cached_;
}

}  // namespace hcudp::kube
