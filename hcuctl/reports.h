// Pure functions from library results to what hcuctl prints; tested directly.
#ifndef HCUCTL_REPORTS_H_
#define HCUCTL_REPORTS_H_

#include <string>
#include <vector>

#include "hcudp/device.h"
#include "hcudp/doctor.h"
#include "hcudp/dra/slices.h"
#include "hcudp/naming.h"
#include "hcudp/options.h"
#include "output.h"

namespace hcuctl {

Report DevicesReport(const hcudp::NodeInventory& inventory);
Report NamesReport(const std::vector<hcudp::Resource>& resources, hcudp::Strategy strategy,
                   hcudp::NamingPolicy policy);
// --strategy=dra: the devices of the node's pool (names as published).
Report DraNamesReport(const hcudp::dra::PoolPlan& plan);
Report TopologyReport(const hcudp::NodeInventory& inventory);
Report VhcuListReport(const hcudp::NodeInventory& inventory);
Report DoctorReport(const std::vector<hcudp::DoctorCheck>& checks);

// One vHCU as printed by devices and vhcu.
Value VhcuValue(const hcudp::Vhcu& vhcu);
std::vector<std::string> VhcuRow(const hcudp::Vhcu& vhcu);
std::vector<std::string> VhcuHeaders();

}  // namespace hcuctl

#endif  // HCUCTL_REPORTS_H_
