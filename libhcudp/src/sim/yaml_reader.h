// Strict, path-aware reading of a yaml-cpp node tree for the SimNode parser.
// Every error names the field path ("cards[2].memoryMiB") and the 1-based
// line, and no yaml-cpp exception escapes (the tree is already parsed; these
// helpers only inspect it).
#ifndef HCUDP_SRC_SIM_YAML_READER_H_
#define HCUDP_SRC_SIM_YAML_READER_H_

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "hcudp/status.h"

namespace hcudp::sim {

// "SimNode <path>: line <n>: <message>" as InvalidArgument.
Status FieldError(const std::string& path, const YAML::Node& node, const std::string& message);

// A mapping at `path`. Construct with Open(); then read fields by key.
class YamlMap {
 public:
  // Error unless `node` is a mapping whose keys are distinct plain strings,
  // all of them in `allowed`.
  static StatusOr<YamlMap> Open(const YAML::Node& node, std::string path,
                                std::initializer_list<std::string_view> allowed);

  bool Has(std::string_view key) const;
  const std::string& path() const { return path_; }
  const YAML::Node& node() const { return node_; }
  std::string PathOf(std::string_view key) const;
  // The value at `key`; an error naming the field when it is absent.
  StatusOr<YAML::Node> Required(std::string_view key) const;

  // Integer in [min, max]; a plain (unquoted) decimal scalar.
  Status Int(std::string_view key, int64_t min, int64_t max, int64_t* out) const;
  Status Int(std::string_view key, int64_t min, int64_t max, int* out) const;
  Status Uint(std::string_view key, uint64_t min, uint64_t max, uint64_t* out) const;
  // Non-empty string scalar (quoted or plain).
  Status String(std::string_view key, std::string* out) const;
  // Plain `true` or `false`.
  Status Bool(std::string_view key, bool* out) const;

 private:
  YamlMap(const YAML::Node& node, std::string path) : node_(node), path_(std::move(path)) {}
  YAML::Node node_;
  std::string path_;
};

// Error unless `node` is a sequence.
Status RequireSequence(const YAML::Node& node, const std::string& path);

}  // namespace hcudp::sim

#endif  // HCUDP_SRC_SIM_YAML_READER_H_
