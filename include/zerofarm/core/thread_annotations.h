// Clang's thread-safety analysis (-Wthread-safety) for zerofarm's mutexes.
// Every mutex in src/ is a zerofarm::Mutex, held through a MutexLock, and the
// data it guards is declared ZF_GUARDED_BY(that mutex); a function that needs
// the mutex held says ZF_REQUIRES(it). tools/check_threads.sh compiles the
// files that use them with clang++ -Wthread-safety -Werror (a step of
// tools/test.sh). Under GCC the macros expand to nothing.
#pragma once

#include <mutex>

#if defined(__clang__)
#define ZF_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define ZF_THREAD_ANNOTATION(x)
#endif

#define ZF_CAPABILITY(x) ZF_THREAD_ANNOTATION(capability(x))
#define ZF_SCOPED_CAPABILITY ZF_THREAD_ANNOTATION(scoped_lockable)
#define ZF_GUARDED_BY(x) ZF_THREAD_ANNOTATION(guarded_by(x))
#define ZF_PT_GUARDED_BY(x) ZF_THREAD_ANNOTATION(pt_guarded_by(x))
#define ZF_REQUIRES(...) ZF_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define ZF_EXCLUDES(...) ZF_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ZF_ACQUIRE(...) ZF_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ZF_RELEASE(...) ZF_THREAD_ANNOTATION(release_capability(__VA_ARGS__))

namespace zerofarm {

// A std::mutex that the analysis knows. BasicLockable (lock, unlock), so a
// std::condition_variable_any can wait on it.
class ZF_CAPABILITY("mutex") Mutex {
 public:
  void lock() ZF_ACQUIRE() { mu_.lock(); }
  void unlock() ZF_RELEASE() { mu_.unlock(); }

 private:
  std::mutex mu_;
};

// Holds a Mutex for its scope (std::lock_guard, analysed).
class ZF_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ZF_ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() ZF_RELEASE() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

}  // namespace zerofarm
