// SharedLibrary: one dlopen()ed vendor library, closed on destruction. Symbols
// are resolved one by one so that a missing one is named in the error.
#ifndef HCUDP_VENDOR_SHARED_LIBRARY_H_
#define HCUDP_VENDOR_SHARED_LIBRARY_H_

#include <memory>
#include <string>
#include <vector>

#include "hcudp/status.h"

namespace hcudp::vendor {

class SharedLibrary {
 public:
  // Tries `dir`/`file_names[i]` in order (versioned soname first) and keeps
  // the first that loads. Always RTLD_LOCAL: the vendor libraries are
  // self-contained (reference/hcu-hardware.md §1.9), and RTLD_GLOBAL would
  // leak librocm_smi64's ~1,400 C++ symbols (and libhydmi_mig's NVML names)
  // into the process.
  // NotFound when no candidate file exists; FailedPrecondition (with
  // dlerror()) when a file exists but does not load.
  static StatusOr<std::unique_ptr<SharedLibrary>> Open(const std::string& dir,
                                                       const std::vector<std::string>& file_names);
  ~SharedLibrary();
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  // The path that was loaded.
  const std::string& path() const { return path_; }

  // dlsym; NotFound naming the library and the symbol when absent.
  StatusOr<void*> Symbol(const char* name) const;

  // Typed helper: *out = the symbol, or an error naming it.
  template <typename Fn>
  Status Resolve(const char* name, Fn* out) const {
    StatusOr<void*> sym = Symbol(name);
    if (!sym.ok()) return sym.status();
    *out = reinterpret_cast<Fn>(*sym);
    return OkStatus();
  }
  // Same, but a missing symbol leaves *out null and is not an error.
  template <typename Fn>
  void ResolveOptional(const char* name, Fn* out) const {
    StatusOr<void*> sym = Symbol(name);
    *out = sym.ok() ? reinterpret_cast<Fn>(*sym) : nullptr;
  }

 private:
  SharedLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  void* handle_;
  std::string path_;
};

}  // namespace hcudp::vendor

#endif  // HCUDP_VENDOR_SHARED_LIBRARY_H_
