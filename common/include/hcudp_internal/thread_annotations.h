// Clang's thread-safety annotations (-Wthread-safety), spelled as macros so
// that g++ builds ignore them. The `asan` preset (clang-14, -Wthread-safety
// -Werror=thread-safety) checks them. Lock order: vhcu/vhcu_manager_impl.h, plugin_manager.h.
//
//   Mutex mu_;
//   int count_ HCUDP_GUARDED_BY(mu_);
//   void Bump() HCUDP_REQUIRES(mu_);
//
// std::mutex carries no capability attribute in libstdc++, so annotated
// code uses hcudp::Mutex / hcudp::MutexLock below (thin wrappers); wait on
// a Mutex with std::condition_variable_any (Mutex is BasicLockable).
#ifndef HCUDP_INTERNAL_THREAD_ANNOTATIONS_H_
#define HCUDP_INTERNAL_THREAD_ANNOTATIONS_H_

#include <mutex>

#if defined(__clang__)
#define HCUDP_TSA(x) __attribute__((x))
#else
#define HCUDP_TSA(x)
#endif

#define HCUDP_CAPABILITY(x) HCUDP_TSA(capability(x))
#define HCUDP_SCOPED_CAPABILITY HCUDP_TSA(scoped_lockable)
#define HCUDP_GUARDED_BY(x) HCUDP_TSA(guarded_by(x))
#define HCUDP_PT_GUARDED_BY(x) HCUDP_TSA(pt_guarded_by(x))
#define HCUDP_ACQUIRED_BEFORE(...) HCUDP_TSA(acquired_before(__VA_ARGS__))
#define HCUDP_ACQUIRED_AFTER(...) HCUDP_TSA(acquired_after(__VA_ARGS__))
#define HCUDP_REQUIRES(...) HCUDP_TSA(requires_capability(__VA_ARGS__))
#define HCUDP_REQUIRES_SHARED(...) HCUDP_TSA(requires_shared_capability(__VA_ARGS__))
#define HCUDP_ACQUIRE_SHARED(...) HCUDP_TSA(acquire_shared_capability(__VA_ARGS__))
#define HCUDP_RELEASE_SHARED(...) HCUDP_TSA(release_shared_capability(__VA_ARGS__))
#define HCUDP_RELEASE_GENERIC(...) HCUDP_TSA(release_generic_capability(__VA_ARGS__))
#define HCUDP_EXCLUDES(...) HCUDP_TSA(locks_excluded(__VA_ARGS__))
#define HCUDP_ACQUIRE(...) HCUDP_TSA(acquire_capability(__VA_ARGS__))
#define HCUDP_RELEASE(...) HCUDP_TSA(release_capability(__VA_ARGS__))
#define HCUDP_TRY_ACQUIRE(...) HCUDP_TSA(try_acquire_capability(__VA_ARGS__))
#define HCUDP_TRY_ACQUIRE_SHARED(...) HCUDP_TSA(try_acquire_shared_capability(__VA_ARGS__))
#define HCUDP_RETURN_CAPABILITY(x) HCUDP_TSA(lock_returned(x))
#define HCUDP_NO_THREAD_SAFETY_ANALYSIS HCUDP_TSA(no_thread_safety_analysis)

namespace hcudp {

// A std::mutex the analysis knows about.
class HCUDP_CAPABILITY("mutex") Mutex {
 public:
  void lock() HCUDP_ACQUIRE() { mu_.lock(); }
  void unlock() HCUDP_RELEASE() { mu_.unlock(); }
  bool try_lock() HCUDP_TRY_ACQUIRE(true) { return mu_.try_lock(); }

  // The std::mutex inside, for waits that need one (hcudp::Clock::WaitUntil;
  // see hcudp_internal/clock_wait.h). Lock it only through this Mutex.
  std::mutex& native() HCUDP_RETURN_CAPABILITY(this) { return mu_; }

 private:
  std::mutex mu_;
};

// std::lock_guard for Mutex.
class HCUDP_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) HCUDP_ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() HCUDP_RELEASE() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

}  // namespace hcudp

#endif  // HCUDP_INTERNAL_THREAD_ANNOTATIONS_H_
