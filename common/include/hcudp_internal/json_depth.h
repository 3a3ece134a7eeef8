// How deep a JSON text nests arrays and objects, checked before it is parsed:
// RapidJSON's recursive parser overflows the stack on about a million '['
// (a few MiB of text), so every reader of outside JSON (the API server's
// answers, the DRA checkpoint, Hygon's state file, the CDI hook's OCI state
// and config.json) asks this first. Header-only: the static hcu-cdi-hook
// uses it without libhcudp.
#ifndef HCUDP_INTERNAL_JSON_DEPTH_H_
#define HCUDP_INTERNAL_JSON_DEPTH_H_

#include <string_view>

namespace hcudp::json_depth {

// Whether `json` nests arrays and objects at most `max_depth` deep. Brackets
// inside strings (escapes included) do not count; the text need not be
// valid JSON.
inline bool NestingWithin(std::string_view json, int max_depth) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : json) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

}  // namespace hcudp::json_depth

#endif  // HCUDP_INTERNAL_JSON_DEPTH_H_
