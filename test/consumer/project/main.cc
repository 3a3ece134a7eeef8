// Lists the devices of a simulated node through libhcudp's public API only:
//   hcudp_consumer <simnode.yaml>
// Prints the library version, then one line per card, then "cards: N".
// Exits 1 when the backend cannot be opened or discovery fails.
#include <cstdio>
#include <iostream>

#include <hcudp/backend.h>
#include <hcudp/device.h>
#include <hcudp/options.h>
#include <hcudp/version.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: hcudp_consumer <simnode.yaml>\n";
    return 2;
  }
  std::cout << "hcudp " << hcudp::Version() << "\n";

  hcudp::Options options;
  options.backend = hcudp::BackendKind::kSim;
  options.sim_node_path = argv[1];
  auto backend = hcudp::OpenBackend(options);
  if (!backend.ok()) {
    std::cerr << "OpenBackend: " << backend.status().ToString() << "\n";
    return 1;
  }
  auto inventory = (*backend)->Discover();
  if (!inventory.ok()) {
    std::cerr << "Discover: " << inventory.status().ToString() << "\n";
    return 1;
  }
  for (const hcudp::Card& card : inventory->cards) {
    std::printf("%d %s %s cu=%d mem=%lluMiB numa=%d %s\n", card.index, card.bdf.c_str(),
                card.model.c_str(), card.compute_units,
                static_cast<unsigned long long>(card.memory_mib()), card.numa_node,
                std::string(hcudp::HealthName(card.health)).c_str());
  }
  std::cout << "cards: " << inventory->cards.size() << "\n";
  return 0;
}
