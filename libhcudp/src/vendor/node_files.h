// What a real node's files say about the HCU driver and cards, read under a
// host-root (reference/hcu-hardware.md §2.1-2.2). Pure file reads; no
// library calls, so they are safe before rsmi_init and while it is down.
#ifndef HCUDP_VENDOR_NODE_FILES_H_
#define HCUDP_VENDOR_NODE_FILES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hcudp/status.h"
#include "hcudp_internal/host_fs.h"

namespace hcudp::vendor {

// The kernel modules the driver has shipped as, newest first.
inline const char* const kDriverModules[] = {"hycu", "hydcu"};

// True when <root>/sys/module/{hycu,hydcu}/initstate reads "live". False when
// the module is absent or in another state (`state` gets the text, or
// "not loaded"). Never an error: an unreadable file means "not live".
bool DriverModuleLive(const internal::HostFs& fs, std::string* state = nullptr);

// <root>/sys/module/<module>/version of the first module present.
StatusOr<std::string> DriverModuleVersion(const internal::HostFs& fs);

// One HCU PCI function from /sys/bus/pci/devices.
struct PciHcu {
  std::string bdf;         // "0000:09:00.0"
  uint16_t device_id = 0;  // 0x6210
};

// PCI functions with vendor 0x1d94 and class 0x0380xx (display) or 0x0b40xx
// (co-processor), sorted by BDF. The same vendor id covers Hygon's CPU
// platform functions, hence the class filter. A missing directory is an
// empty list.
std::vector<PciHcu> ScanPciHcus(const internal::HostFs& fs);

// "0000:09:00.0" from an RSMI BDFID (domain<<32 | bus<<8 | device<<3 | fn;
// the partition bits 31..28 are ignored), lower-case.
std::string FormatBdfId(uint64_t bdfid);

// The model the vendor's built-in table gives a PCI device id ("K100_AI"
// for 0x6210), or empty when unknown (reference/seed-behaviour.md §6.5).
std::string ModelForPciDeviceId(uint16_t device_id);

}  // namespace hcudp::vendor

#endif  // HCUDP_VENDOR_NODE_FILES_H_
