// Small helpers the benchmarks share: their numeric arguments, percentiles,
// spawning and stopping the daemon under test, and reading its memory from
// /proc.
#pragma once

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace hcudp::bench {

// A benchmark's numeric argument or HCUDP_BENCH_* knob, named `name`: the
// whole of `text` as a number of at least `min`. Anything else exits 2 and
// names the argument, so a typo never runs a different benchmark than the
// one asked for (atoi would read "2k" as 2 and "x" as 0).
inline long CountArg(const char* name, const char* text, long min) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno == ERANGE || v < min) {
    std::fprintf(stderr, "%s: %s: '%s' is not a whole number >= %ld\n",
                 program_invocation_short_name, name, text, min);
    std::exit(2);
  }
  return v;
}

inline double BoundArg(const char* name, const char* text, double min) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || errno == ERANGE || !std::isfinite(v) || v < min) {
    std::fprintf(stderr, "%s: %s: '%s' is not a number >= %g\n", program_invocation_short_name,
                 name, text, min);
    std::exit(2);
  }
  return v;
}

// argv[i] as CountArg/BoundArg read it, or `fallback` when there are fewer
// arguments.
inline long CountArgAt(int argc, char** argv, int i, const char* name, long fallback,
                       long min = 1) {
  return argc > i ? CountArg(name, argv[i], min) : fallback;
}

inline double BoundArgAt(int argc, char** argv, int i, const char* name, double fallback,
                         double min = 0) {
  return argc > i ? BoundArg(name, argv[i], min) : fallback;
}

// The environment variable `var` as CountArg/BoundArg read it, or `fallback`
// when it is unset or empty.
inline long EnvCount(const char* var, long fallback, long min = 1) {
  const char* v = std::getenv(var);
  return v != nullptr && *v != '\0' ? CountArg(var, v, min) : fallback;
}

inline double EnvBound(const char* var, double fallback, double min = 0) {
  const char* v = std::getenv(var);
  return v != nullptr && *v != '\0' ? BoundArg(var, v, min) : fallback;
}

// The p-th percentile (0..1) by nearest rank; 0 for no samples.
inline double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// Starts args[0] with args; -1 when it could not be started.
inline pid_t Spawn(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return -1;
  return pid;
}

// SIGTERM, then reaps it; SIGKILL when it has not exited 20 s later (a hung
// daemon must not hang the benchmark, which reports it).
inline void Terminate(pid_t pid) {
  ::kill(pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      std::fprintf(stderr, "%s: pid %d still running 20 s after SIGTERM; SIGKILL\n",
                   program_invocation_short_name, static_cast<int>(pid));
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// A field of /proc/<pid>/<file> in KiB ("RssAnon:" in status, "Private_Dirty:"
// in smaps_rollup); -1 when it is not there.
inline double ProcKib(pid_t pid, const std::string& file, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/" + file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) return std::atof(line.c_str() + key.size());
  }
  return -1;
}

// Private memory: the Private_Dirty pages that are anonymous (heap, stacks,
// written data), summed map by map in /proc/<pid>/smaps. Left out:
// Private_Clean (code pages of shared libraries that no other running process
// happens to touch) and file pages that are dirty only because the file was
// just written (a binary linked seconds before the run: its code counts as
// Private_Dirty until the kernel writes it back).
inline double PrivateAnonKib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/smaps");
  std::string line;
  double total = 0, dirty = 0, anon = 0;
  auto field = [&](const char* key, double* out) {
    if (line.rfind(key, 0) == 0) *out = std::atof(line.c_str() + std::strlen(key));
  };
  while (std::getline(in, line)) {
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) &&
        line.find('-') < line.find(' ')) {  // a new mapping's header
      total += std::min(dirty, anon);
      dirty = anon = 0;
    }
    field("Private_Dirty:", &dirty);
    field("Anonymous:", &anon);
  }
  return total + std::min(dirty, anon);
}

}  // namespace hcudp::bench
