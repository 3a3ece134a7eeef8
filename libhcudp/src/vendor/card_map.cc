#include <algorithm>
#include <set>

#include "vendor/dlopen_vendor_lib_impl.h"
#include "vendor/node_files.h"

namespace hcudp::vendor {

CardMap BuildCardMap(const std::vector<CardFacts>& rsmi_cards,
                     const StatusOr<std::vector<std::string>>& kfd_bdfs,
                     const std::vector<std::string>& dmi_names_in_dmi_order,
                     const std::vector<PciHcu>* pci_scan, std::string* problems) {
  CardMap map;
  const int n = static_cast<int>(rsmi_cards.size());
  for (const CardFacts& c : rsmi_cards) map.bdfs.push_back(c.bdf);

  std::vector<std::string> found;
  const auto problem = [&](std::string p) { found.push_back(std::move(p)); };

  if (static_cast<int>(dmi_names_in_dmi_order.size()) != n) {
    problem("dmi lists " + std::to_string(dmi_names_in_dmi_order.size()) + " cards, rsmi " +
            std::to_string(n));
  }
  if (std::set<std::string>(map.bdfs.begin(), map.bdfs.end()).size() != map.bdfs.size()) {
    problem("rsmi reports the same PCI address twice");
  }
  if (pci_scan != nullptr) {
    for (const CardFacts& c : rsmi_cards) {
      auto it = std::find_if(pci_scan->begin(), pci_scan->end(),
                             [&](const PciHcu& p) { return p.bdf == c.bdf; });
      if (it == pci_scan->end()) {
        problem("rsmi card " + c.bdf + " is not an HCU in /sys/bus/pci/devices");
      } else if (c.rsmi_device_id != 0 && it->device_id != 0 && c.rsmi_device_id != it->device_id) {
        problem("rsmi device id of " + c.bdf + " differs from sysfs");
      }
    }
  }

  if (!kfd_bdfs.ok()) {
    // Without the topology nothing tells DMI's order: assume RSMI's (both
    // follow the driver's probe order on the shipped libraries).
    problem("KFD topology unreadable (" + kfd_bdfs.status().message() +
            "), assuming DMI index = RSMI index");
    for (int i = 0; i < n; ++i) map.dmi_index.push_back(i);
  } else {
    // DMI index of a card = position of its BDF among the KFD GPU nodes.
    const std::vector<std::string>& kfd = *kfd_bdfs;
    if (kfd.size() != dmi_names_in_dmi_order.size()) {
      problem("KFD topology lists " + std::to_string(kfd.size()) + " GPU nodes, dmi " +
              std::to_string(dmi_names_in_dmi_order.size()) + " cards");
    }
    for (int i = 0; i < n; ++i) {
      auto it = std::find(kfd.begin(), kfd.end(), map.bdfs[i]);
      if (it == kfd.end()) {
        problem("rsmi card " + std::to_string(i) + " (" + map.bdfs[i] +
                ") is not a GPU node of the KFD topology; no DMI calls for it");
        map.dmi_index.push_back(-1);
      } else {
        map.dmi_index.push_back(static_cast<int>(it - kfd.begin()));
      }
    }
  }

  for (int i = 0; i < n; ++i) {
    const int d = map.dmi_index[i];
    if (d < 0 || d >= static_cast<int>(dmi_names_in_dmi_order.size())) continue;
    const std::string expected = ModelForPciDeviceId(rsmi_cards[i].rsmi_device_id);
    std::string dmi_name = dmi_names_in_dmi_order[d];
    dmi_name = dmi_name.substr(0, dmi_name.find(','));
    if (!expected.empty() && !dmi_name.empty() && dmi_name != expected) {
      std::string p = "dmi card " + std::to_string(d);
      p.append(" is \"").append(dmi_name).append("\" but rsmi card ").append(std::to_string(i));
      p.append(" (").append(map.bdfs[i]).append(") is a ").append(expected);
      problem(std::move(p));
    }
  }
  map.verified = found.empty();
  if (problems != nullptr) {
    problems->clear();
    for (const std::string& p : found) *problems += (problems->empty() ? "" : "; ") + p;
  }
  return map;
}

}  // namespace hcudp::vendor
