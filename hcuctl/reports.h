// Pure functions from library results to what hcuctl prints; tested directly.
#ifndef HCUCTL_REPORTS_H_
#define HCUCTL_REPORTS_H_

#include <vector>

#include "hcudp/device.h"
#include "hcudp/naming.h"
#include "hcudp/options.h"
#include "output.h"

namespace hcuctl {

Report DevicesReport(const hcudp::NodeInventory& inventory);
Report NamesReport(const std::vector<hcudp::Resource>& resources, hcudp::Strategy strategy,
                   hcudp::NamingPolicy policy);
Report TopologyReport(const hcudp::NodeInventory& inventory);
Report VhcuListReport(const hcudp::NodeInventory& inventory);

}  // namespace hcuctl

#endif  // HCUCTL_REPORTS_H_
