#include "naming/demo_inventories.h"

#include <string>
#include <vector>

namespace hcudp::testing {
namespace {

struct CardRow {
  const char* bdf;
  int numa;
  const char* serial;
  int card_minor;
};

std::vector<Card> MakeCards(const std::vector<CardRow>& rows, const char* model, uint16_t device_id,
                            int cus, uint64_t mib) {
  std::vector<Card> cards;
  for (size_t i = 0; i < rows.size(); ++i) {
    Card c;
    c.index = static_cast<int>(i);
    c.bdf = rows[i].bdf;
    c.model = model;
    c.pci_device_id = device_id;
    c.serial = rows[i].serial;
    c.compute_units = cus;
    c.memory_bytes = mib * kMiB;
    c.numa_node = rows[i].numa;
    c.dri_nodes = {"/dev/dri/card" + std::to_string(rows[i].card_minor),
                   "/dev/dri/renderD" + std::to_string(127 + rows[i].card_minor)};
    cards.push_back(c);
  }
  return cards;
}

// Every ordered pair, typed by `link_for(src, dst)`.
template <typename F>
std::vector<Link> AllPairs(int n, F link_for) {
  std::vector<Link> links;
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) {
      if (s == d) continue;
      Link l = link_for(s, d);
      l.src = s;
      l.dst = d;
      links.push_back(l);
    }
  }
  return links;
}

Vhcu MakeVhcu(int id, int card, const char* bdf, int cus, uint64_t mib, int pipe) {
  Vhcu v;
  v.id = id;
  v.card = card;
  v.card_bdf = bdf;
  v.compute_units = cus;
  v.memory_mib = mib;
  v.pipe_id = pipe;
  v.conf_path = "/etc/vdev/vdev" + std::to_string(id) + ".conf";
  return v;
}

MigInstance MakeMig(int card, const char* bdf, int gi, const char* profile, int cus, uint64_t mib,
                    const char* uuid) {
  MigInstance m;
  m.card = card;
  m.card_bdf = bdf;
  m.gpu_instance = gi;
  m.compute_instance = 0;
  m.profile = profile;
  m.compute_units = cus;
  m.memory_mib = mib;
  m.uuid = uuid;
  m.conf_path =
      "/etc/dmi_mig_config/ci/dev" + std::to_string(card) + "gi" + std::to_string(gi) + "ci0.conf";
  return m;
}

}  // namespace

NodeInventory K100ai8Inventory() {
  NodeInventory inv;
  inv.driver_version = "6.3.27-V1.2.5";
  inv.cards = MakeCards({{"0000:09:00.0", 0, "T6T8290019020401", 1},
                         {"0000:29:00.0", 1, "T6T8290019030301", 2},
                         {"0000:49:00.0", 2, "T6T8290017030301", 3},
                         {"0000:69:00.0", 3, "T6T8290017040201", 4},
                         {"0000:89:00.0", 4, "T6T8290018010101", 5},
                         {"0000:a9:00.0", 5, "T6T8290018010201", 6},
                         {"0000:c9:00.0", 6, "T6T8290018020101", 7},
                         {"0000:e9:00.0", 7, "T6T8290018020301", 8}},
                        "K100_AI", 0x6210, 120, 65520);
  inv.links = AllPairs(8, [](int, int) {
    Link l;
    l.type = LinkType::kHsl;
    l.hops = 1;
    l.weight = 15;
    l.up_links = 1;
    return l;
  });
  inv.has_kfd = true;
  inv.has_mkfd = true;
  return inv;
}

NodeInventory Z100lMixedInventory() {
  NodeInventory inv;
  inv.driver_version = "6.3.27-V1.2.5";
  inv.cards = MakeCards({{"0000:0b:00.0", 0, "T6Q2210021050101", 1},
                         {"0000:0e:00.0", 0, "T6Q2210021050201", 2},
                         {"0000:8b:00.0", 1, "T6Q2210021060101", 3},
                         {"0000:8e:00.0", 1, "T6Q2210021060201", 4}},
                        "Z100L", 0x55b7, 60, 32752);
  inv.links = AllPairs(4, [](int s, int d) {
    bool same_socket = (s < 2) == (d < 2);
    Link l;
    l.type = LinkType::kPcie;
    l.hops = same_socket ? 2 : 3;
    l.weight = same_socket ? 40 : 72;
    return l;
  });
  for (int i = 0; i < 4; ++i) inv.vhcus.push_back(MakeVhcu(i, 2, "0000:8b:00.0", 15, 8188, i));
  for (int i = 0; i < 2; ++i) inv.vhcus.push_back(MakeVhcu(4 + i, 3, "0000:8e:00.0", 30, 16376, i));
  inv.has_kfd = true;
  inv.has_mkfd = true;
  return inv;
}

NodeInventory BwMigInventory() {
  NodeInventory inv;
  inv.driver_version = "6.3.27-V1.2.5";
  inv.cards = MakeCards({{"0000:09:00.0", 0, "T8B2310011010101", 1},
                         {"0000:39:00.0", 1, "T8B2310011010201", 2},
                         {"0000:89:00.0", 2, "T8B2310011020101", 3},
                         {"0000:b9:00.0", 3, "T8B2310011020201", 4}},
                        "BW200", 0x6310, 80, 65520);
  inv.links = AllPairs(4, [](int, int) {
    Link l;
    l.type = LinkType::kPcie;
    l.hops = 3;
    l.weight = 72;
    return l;
  });
  inv.mig_enabled = true;
  const char* b0 = "0000:09:00.0";
  inv.mig_instances = {
      MakeMig(0, b0, 3, "2g.15gb", 20, 16380, "6513270e-269e-4d37-b2a7-4de452e6b438"),
      MakeMig(0, b0, 4, "2g.15gb", 20, 16380, "d23f0824-128b-4f33-8c5c-7fd0a6a3a450"),
      MakeMig(0, b0, 5, "2g.15gb", 20, 16380, "9531985d-5d9d-49f8-9818-e811892f902b"),
      MakeMig(0, b0, 6, "2g.15gb", 20, 16380, "36f675cc-81e7-4ef5-a8e2-5d940ed90475"),
      MakeMig(1, "0000:39:00.0", 1, "4g.31gb", 40, 32760, "6b0d549b-6f03-475a-9600-a35a099950d8"),
      MakeMig(1, "0000:39:00.0", 2, "4g.31gb", 40, 32760, "8d116ece-1738-47d9-bd9c-172411e20b8f"),
      MakeMig(2, "0000:89:00.0", 0, "8g.63gb", 80, 65520, "90c192cf-d3ac-44af-8f21-ddb66cad4a26"),
      MakeMig(3, "0000:b9:00.0", 1, "4g.31gb", 40, 32760, "0fd630f1-f29d-4da9-953f-48f1a09f76b5"),
      MakeMig(3, "0000:b9:00.0", 3, "2g.15gb", 20, 16380, "a170b338-3926-4059-b28c-105d1fb17c23"),
  };
  inv.has_kfd = true;
  inv.has_mkfd = true;
  return inv;
}

}  // namespace hcudp::testing
