#include "vendor/shared_library.h"

#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

namespace hcudp::vendor {

StatusOr<std::unique_ptr<SharedLibrary>> SharedLibrary::Open(
    const std::string& dir, const std::vector<std::string>& file_names) {
  std::string tried;
  std::string load_errors;
  for (const std::string& name : file_names) {
    std::string path = dir;
    path.append("/").append(name);
    if (!tried.empty()) tried += ", ";
    tried += path;
    if (access(path.c_str(), F_OK) != 0) continue;
    dlerror();  // clear
    // RTLD_NODELETE: a vendor library is never unmapped, even after
    // dlclose; it may keep threads or static state (as when linked at build
    // time by the vendor's own plugin), and a re-init after a driver reload
    // must not run its static initialisers twice.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NODELETE | RTLD_LOCAL);
    if (handle != nullptr) {
      return std::unique_ptr<SharedLibrary>(new SharedLibrary(handle, path));
    }
    const char* err = dlerror();
    if (!load_errors.empty()) load_errors += "; ";
    load_errors += err != nullptr ? err : path + ": dlopen failed";
  }
  if (!load_errors.empty()) {
    return FailedPreconditionError("cannot load vendor library: " + load_errors);
  }
  std::string hint;
  if (!file_names.empty()) {
    // Name files that look like the library under another soname, so a
    // version mismatch is obvious ("found librocm_smi64.so.3").
    const std::string& bare = file_names.back();
    if (DIR* d = opendir(dir.c_str())) {
      while (dirent* e = readdir(d)) {
        std::string n = e->d_name;
        if (n.compare(0, bare.size(), bare) == 0) hint += (hint.empty() ? "" : ", ") + n;
      }
      closedir(d);
    }
  }
  return NotFoundError("vendor library not found (tried " + tried + ")" +
                       (hint.empty() ? "" : "; found only " + hint + " (unsupported soname)"));
}

SharedLibrary::~SharedLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

StatusOr<void*> SharedLibrary::Symbol(const char* name) const {
  dlerror();
  void* sym = dlsym(handle_, name);
  if (sym == nullptr) {
    return NotFoundError(path_ + ": missing symbol " + name);
  }
  return sym;
}

}  // namespace hcudp::vendor
