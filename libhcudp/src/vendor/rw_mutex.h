// RwMutex: a reader/writer lock that lets a waiting writer in ahead of new
// readers. std::shared_mutex on glibc prefers readers, so a steady stream of
// queries could starve the re-initialisation that must hold it exclusively.
// Meets the SharedMutex requirements; take it with ReaderLock / WriterLock
// below, which clang's thread-safety analysis checks. Not recursive: a thread
// must not take it twice.
#ifndef HCUDP_VENDOR_RW_MUTEX_H_
#define HCUDP_VENDOR_RW_MUTEX_H_

#include <pthread.h>

#include "hcudp_internal/thread_annotations.h"

namespace hcudp::vendor {

class HCUDP_CAPABILITY("mutex") RwMutex {
 public:
  RwMutex() {
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&lock_, &attr);
    pthread_rwlockattr_destroy(&attr);
  }
  ~RwMutex() { pthread_rwlock_destroy(&lock_); }
  RwMutex(const RwMutex&) = delete;
  RwMutex& operator=(const RwMutex&) = delete;

  void lock() HCUDP_ACQUIRE() { pthread_rwlock_wrlock(&lock_); }
  bool try_lock() HCUDP_TRY_ACQUIRE(true) { return pthread_rwlock_trywrlock(&lock_) == 0; }
  void unlock() HCUDP_RELEASE() { pthread_rwlock_unlock(&lock_); }
  void lock_shared() HCUDP_ACQUIRE_SHARED() { pthread_rwlock_rdlock(&lock_); }
  bool try_lock_shared() HCUDP_TRY_ACQUIRE_SHARED(true) {
    return pthread_rwlock_tryrdlock(&lock_) == 0;
  }
  void unlock_shared() HCUDP_RELEASE_SHARED() { pthread_rwlock_unlock(&lock_); }

 private:
  pthread_rwlock_t lock_;
};

// std::shared_lock for RwMutex, as the analysis sees it.
class HCUDP_SCOPED_CAPABILITY ReaderLock {
 public:
  explicit ReaderLock(RwMutex& mu) HCUDP_ACQUIRE_SHARED(mu) : mu_(mu) { mu_.lock_shared(); }
  ~ReaderLock() HCUDP_RELEASE() { mu_.unlock_shared(); }
  ReaderLock(const ReaderLock&) = delete;
  ReaderLock& operator=(const ReaderLock&) = delete;

 private:
  RwMutex& mu_;
};

// std::unique_lock for RwMutex (exclusive), as the analysis sees it.
class HCUDP_SCOPED_CAPABILITY WriterLock {
 public:
  explicit WriterLock(RwMutex& mu) HCUDP_ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~WriterLock() HCUDP_RELEASE() { mu_.unlock(); }
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  RwMutex& mu_;
};

}  // namespace hcudp::vendor

#endif  // HCUDP_VENDOR_RW_MUTEX_H_
