// The model's simulated nodes (README.md in this folder): what they carry,
// the SimNode YAML written for them (with cards taken out and health set),
// and the few file helpers the model reads the host root with.
#ifndef HCUDP_TEST_MODEL_MODEL_NODE_H_
#define HCUDP_TEST_MODEL_MODEL_NODE_H_

#include <set>
#include <string>
#include <vector>

#include "model/model.h"

namespace hcudp::model {

struct SpecCard {
  std::string bdf;
  int cores;
  int memory_mib;
  bool removable;  // carries no admin vHCU or MIG instance
};
struct SpecVhcu {
  int id;
  std::string card_bdf;
  int cores;
  int memory_mib;
  int pipe;
};
struct SpecMig {
  std::string card_bdf;
  int gi, ci;
  std::string profile;
  int cores, memory_mib;
  std::string uuid;
};

struct NodeSpec {
  std::string model;
  std::string device_id;
  std::vector<SpecCard> cards;  // in index order; index != BDF order
  std::vector<SpecVhcu> vhcus;  // the admin's pre-split vHCUs
  bool mig = false;
  std::vector<SpecMig> migs;
};

NodeSpec SpecFor(NodeKind kind);

// The SimNode YAML with the cards of `removed` left out (the others
// renumbered densely, as the driver's probe order would) and `unhealthy`
// cards Unhealthy.
std::string NodeYaml(const NodeSpec& s, const std::set<std::string>& removed,
                     const std::set<std::string>& unhealthy);

// Files under the host root, never failing the test: absent reads as "".
bool Exists(const std::string& path);  // lstat: any type
std::string Slurp(const std::string& path);
std::vector<std::string> List(const std::string& dir);  // sorted names
void WriteAtomically(const std::string& path, const std::string& text);

}  // namespace hcudp::model

#endif  // HCUDP_TEST_MODEL_MODEL_NODE_H_
