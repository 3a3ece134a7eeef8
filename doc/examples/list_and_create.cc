// doc/library.md's example: list a simulated node's cards, create (then
// destroy) one vHCU on card 0 through the node's one door (hcudp/node.h).
// Built against the installed package: list_and_create <simnode.yaml> <root>
#include <hcudp/node.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  hcudp::NodeOptions options;
  options.options.backend = hcudp::BackendKind::kSim;
  options.options.sim_node_path = argv[1];
  options.options.host_root = argv[2];  // where the sim writes /etc/vdev/vdev<N>.conf
  auto node = hcudp::Node::Open(std::move(options));
  if (!node.ok()) return std::fprintf(stderr, "%s\n", node.status().ToString().c_str()), 1;
  auto inventory = (*node)->Look();
  if (!inventory.ok()) return 1;
  for (const hcudp::Card& card : inventory->cards) {
    std::printf("card %d %s %s %d CUs %llu MiB\n", card.index, card.bdf.c_str(), card.model.c_str(),
                card.compute_units, static_cast<unsigned long long>(card.memory_mib()));
  }
  // 30 compute units and 8 GiB of card 0, as a container's vHCU: under the
  // host-wide vHCU lock, refused if card 0 is held whole or unknown.
  auto made = (*node)->CreateVhcu(/*card=*/0, /*compute_units=*/30, /*memory_mib=*/8192);
  if (!made.ok()) return std::fprintf(stderr, "%s\n", made.status().ToString().c_str()), 1;
  const hcudp::Vhcu& vhcu = made->vhcu;
  std::printf("vhcu %d on %s: %s\n", vhcu.id, vhcu.card_bdf.c_str(), vhcu.conf_path.c_str());
  // Refused (without force) if the node's ledger says someone holds it.
  return (*node)->DestroyVhcu(vhcu.id).ok() ? 0 : 1;
}
