#include "model/model_node.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace hcudp::model {

// ---------------------------------------------------------------- files

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> List(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

void WriteAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
  }
  std::rename(tmp.c_str(), path.c_str());
}

// ---------------------------------------------------------------- the node



NodeSpec SpecFor(NodeKind kind) {
  NodeSpec s;
  if (kind == NodeKind::kMixed) {
    // Z100L: card 0 split in two, card 1 half split, cards 2 and 3 whole.
    s.model = "Z100L";
    s.device_id = "0x55b7";
    s.cards = {{"0000:8b:00.0", 60, 32752, false},
               {"0000:0e:00.0", 60, 32752, false},
               {"0000:4e:00.0", 60, 32752, true},
               {"0000:0b:00.0", 60, 32752, true}};
    s.vhcus = {{0, "0000:8b:00.0", 30, 16376, 0},
               {1, "0000:8b:00.0", 30, 16376, 1},
               {2, "0000:0e:00.0", 30, 16376, 0}};
  } else {
    s.model = "BW200";
    s.device_id = "0x6310";
    s.cards = {{"0000:89:00.0", 80, 65520, false},
               {"0000:09:00.0", 80, 65520, false},
               {"0000:b9:00.0", 80, 65520, true},
               {"0000:39:00.0", 80, 65520, false}};
    s.mig = true;
    s.migs = {{"0000:89:00.0", 1, 0, "4g.31gb", 40, 32760, "6b0d549b-6f03-475a-9600-a35a099950d8"},
              {"0000:89:00.0", 2, 0, "4g.31gb", 40, 32760, "6b0d549b-6f03-475a-9600-a35a099950d9"},
              {"0000:09:00.0", 1, 0, "4g.31gb", 40, 32760, "1c2d549b-6f03-475a-9600-a35a099950d8"},
              {"0000:39:00.0", 0, 0, "8g.63gb", 80, 65520, "90c192cf-d3ac-44af-8f21-ddb66cad4a26"}};
  }
  return s;
}

std::string NodeYaml(const NodeSpec& s, const std::set<std::string>& removed,
                     const std::set<std::string>& unhealthy) {
  std::ostringstream y;
  y << "apiVersion: hcudp.hygon.com/v1\nkind: SimNode\nname: model\n"
       "driverVersion: 6.3.27-V1.2.5\ncards:\n";
  std::map<std::string, int> index;
  int i = 0, minor = 0;
  for (const SpecCard& c : s.cards) {
    ++minor;
    if (removed.count(c.bdf) != 0) continue;
    index[c.bdf] = i;
    y << "  - index: " << i << "\n    bdf: \"" << c.bdf << "\"\n    model: " << s.model
      << "\n    pciDeviceId: \"" << s.device_id << "\"\n    serial: T6Q22100210" << minor
      << "\n    computeUnits: " << c.cores << "\n    memoryMiB: " << c.memory_mib
      << "\n    numaNode: 0\n    cardMinor: " << minor << "\n    renderMinor: " << 127 + minor
      << "\n    health: " << (unhealthy.count(c.bdf) != 0 ? "Unhealthy" : "Healthy") << "\n";
    ++i;
  }
  y << "maxVhcusPerCard: 4\nvhcus:\n";
  bool any = false;
  for (const SpecVhcu& v : s.vhcus) {
    if (index.count(v.card_bdf) == 0) continue;
    any = true;
    y << "  - {id: " << v.id << ", card: " << index[v.card_bdf] << ", computeUnits: " << v.cores
      << ", memoryMiB: " << v.memory_mib << ", pipeId: " << v.pipe << "}\n";
  }
  if (!any) y << "  []\n";
  y << "mig:\n  enabled: " << (s.mig ? "true" : "false") << "\n  instances:\n";
  any = false;
  for (const SpecMig& m : s.migs) {
    if (index.count(m.card_bdf) == 0) continue;
    any = true;
    y << "    - {card: " << index[m.card_bdf] << ", gi: " << m.gi << ", ci: " << m.ci
      << ", profile: " << m.profile << ", computeUnits: " << m.cores
      << ", memoryMiB: " << m.memory_mib << ", uuid: " << m.uuid << "}\n";
  }
  if (!any) y << "    []\n";
  return y.str();
}

}  // namespace hcudp::model
