#include "stub_control.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace hcudp::stub {

std::optional<std::string> Knob(const std::string& key) {
  if (const char* path = std::getenv("HCUDP_STUB_CONTROL"); path != nullptr && *path != '\0') {
    // Read with read(2), not an ifstream: every stub call reads the file,
    // and an ifstream's 8 KiB buffer per read made ASan builds crawl.
    std::string text;
    if (int fd = open(path, O_RDONLY | O_CLOEXEC); fd >= 0) {
      char buf[1024];
      for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;)
        text.append(buf, static_cast<size_t>(n));
      close(fd);
    }
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      const size_t eq = line.find('=');
      if (eq == std::string::npos || line.substr(0, eq) != key) continue;
      std::string value = line.substr(eq + 1);
      while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) {
        value.pop_back();
      }
      return value;
    }
  }
  std::string env = "HCUDP_STUB_";
  for (char c : key) env += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (const char* v = std::getenv(env.c_str()); v != nullptr) return std::string(v);
  if (key == "host_root") {
    // Like the driver's files, the node lives under the host-root the
    // loading process was started with (hcu-dp-daemon/hcuctl --host-root=);
    // the fake hy-smi looks at the process that ran it.
    for (const std::string& proc :
         {std::string("/proc/self/cmdline"), "/proc/" + std::to_string(getppid()) + "/cmdline"}) {
      std::ifstream cmdline(proc);
      std::string arg;
      while (std::getline(cmdline, arg, '\0')) {
        if (arg.rfind("--host-root=", 0) == 0) return arg.substr(12);
      }
    }
  }
  return std::nullopt;
}

long KnobInt(const std::string& key, long fallback) {
  std::optional<std::string> v = Knob(key);
  if (!v || v->empty()) return fallback;
  char* end = nullptr;
  const long n = std::strtol(v->c_str(), &end, 10);
  return (end != nullptr && *end == '\0') ? n : fallback;
}

std::optional<std::string> CardKnob(const std::string& key, int card) {
  std::optional<std::string> v = Knob(key);
  if (!v) return std::nullopt;
  const size_t colon = v->find(':');
  if (colon == std::string::npos || v->substr(0, colon) != std::to_string(card)) {
    return std::nullopt;
  }
  return v->substr(colon + 1);
}

}  // namespace hcudp::stub
