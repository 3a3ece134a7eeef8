// RwMutex: a reader/writer lock that lets a waiting writer in ahead of new
// readers. std::shared_mutex on glibc prefers readers, so a steady stream of
// queries could starve the re-initialisation that must hold it exclusively.
// Meets the SharedMutex requirements (use with std::shared_lock and
// std::unique_lock). Not recursive: a thread must not take it twice.
#ifndef HCUDP_VENDOR_RW_MUTEX_H_
#define HCUDP_VENDOR_RW_MUTEX_H_

#include <pthread.h>

namespace hcudp::vendor {

class RwMutex {
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

  void lock() { pthread_rwlock_wrlock(&lock_); }
  bool try_lock() { return pthread_rwlock_trywrlock(&lock_) == 0; }
  void unlock() { pthread_rwlock_unlock(&lock_); }
  void lock_shared() { pthread_rwlock_rdlock(&lock_); }
  bool try_lock_shared() { return pthread_rwlock_tryrdlock(&lock_) == 0; }
  void unlock_shared() { pthread_rwlock_unlock(&lock_); }

 private:
  pthread_rwlock_t lock_;
};

}  // namespace hcudp::vendor

#endif  // HCUDP_VENDOR_RW_MUTEX_H_
