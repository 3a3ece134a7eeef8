#include <algorithm>
#include <set>

#include "vendor/dlopen_vendor_lib_impl.h"
#include "vendor/node_files.h"

namespace hcudp::vendor {

CardMap BuildCardMap(const std::vector<CardFacts>& rsmi_cards,
                     const std::vector<std::string>& dmi_names_in_dmi_order,
                     const std::vector<PciHcu>* pci_scan, std::string* problems) {
  CardMap map;
  const int n = static_cast<int>(rsmi_cards.size());
  for (const CardFacts& c : rsmi_cards) map.bdfs.push_back(c.bdf);
  // Identity until proven otherwise.
  for (int i = 0; i < n; ++i) map.dmi_index.push_back(i);

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
  if (found.empty()) {
    // DMI walks the cards in PCI order: its index of a card is the rank of
    // the card's BDF.
    std::vector<std::string> sorted = map.bdfs;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < n; ++i) {
      map.dmi_index[i] = static_cast<int>(
          std::lower_bound(sorted.begin(), sorted.end(), map.bdfs[i]) - sorted.begin());
    }
    for (int i = 0; i < n; ++i) {
      const std::string expected = ModelForPciDeviceId(rsmi_cards[i].rsmi_device_id);
      std::string dmi_name = dmi_names_in_dmi_order[map.dmi_index[i]];
      dmi_name = dmi_name.substr(0, dmi_name.find(','));
      if (!expected.empty() && !dmi_name.empty() && dmi_name != expected) {
        std::string p = "dmi card " + std::to_string(map.dmi_index[i]);
        p.append(" is \"").append(dmi_name).append("\" but rsmi card ").append(std::to_string(i));
        p.append(" (").append(map.bdfs[i]).append(") is a ").append(expected);
        problem(std::move(p));
      }
    }
  }
  if (!found.empty()) {
    for (int i = 0; i < n; ++i) map.dmi_index[i] = i;
  }
  map.verified = found.empty();
  if (problems != nullptr) {
    problems->clear();
    for (const std::string& p : found) *problems += (problems->empty() ? "" : "; ") + p;
  }
  return map;
}

}  // namespace hcudp::vendor
