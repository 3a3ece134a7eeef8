// Temporary: replaced by sim_node.cc.
#include "hcudp/sim_node.h"
namespace hcudp {
std::string DefaultSimHostRoot(const std::string& p) { return "/tmp/hcudp-sim-" + std::to_string(std::hash<std::string>{}(p)); }
}
