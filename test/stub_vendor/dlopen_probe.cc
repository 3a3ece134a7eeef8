// dlopen_probe <library>: loads one library (RTLD_NOW) in a fresh process and
// exits 0, or prints dlerror() and exits 1. Tests use it to observe what
// loading a stand-in library does on its own (it renders its node).
#include <dlfcn.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: dlopen_probe <library>\n");
    return 2;
  }
  if (dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) == nullptr) {
    std::fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  return 0;
}
