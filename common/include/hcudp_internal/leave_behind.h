// LeaveBehind: give up an object that a hung call still uses, on purpose.
//
// A server whose handler never returned must outlive its owner (the process
// ends soon after, by _Exit in the daemon). The object is released and, in
// LeakSanitizer builds, marked as intentionally kept, so that a test that
// drives the hung path in process does not report it (or what it points to)
// as a leak, while every other leak still is.
//
//   LOG(WARNING) << "a call is still running; not waiting for it";
//   LeaveBehind(server_);
#ifndef HCUDP_INTERNAL_LEAVE_BEHIND_H_
#define HCUDP_INTERNAL_LEAVE_BEHIND_H_

#include <memory>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define HCUDP_LSAN 1
#endif
#endif
#if !defined(HCUDP_LSAN) && defined(__SANITIZE_ADDRESS__)
#define HCUDP_LSAN 1
#endif
#ifdef HCUDP_LSAN
#include <sanitizer/lsan_interface.h>
#endif

namespace hcudp {

template <typename T>
void LeaveBehind(std::unique_ptr<T>& object) {
  T* kept = object.release();
#ifdef HCUDP_LSAN
  if (kept != nullptr) __lsan_ignore_object(kept);
#else
  (void)kept;
#endif
}

}  // namespace hcudp

#endif  // HCUDP_INTERNAL_LEAVE_BEHIND_H_
