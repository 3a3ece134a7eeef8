// Stand-in libhydmi: the DMI calls of reference/hcu-hardware.md §1.4 over the
// SimNode. DMI indices follow the KFD topology's GPU node order, as the real
// library numbers them (§1.9), and, like it, the stand-in initialises once
// per process: when hymgr is down at the first call (knob hymgr=down), every
// later call answers NOT_INITIALIZED (13), whatever the knobs say then.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "stub_control.h"
#include "stub_core.h"
#include "vendor/vendor_abi.h"

using hcudp::Status;
using hcudp::StatusCode;
using hcudp::StatusOr;
using hcudp::stub::Sim;

namespace {

dmiStatus ToDmi(const Status& st) {
  switch (st.code()) {
    case StatusCode::kOk:
      return DMI_STATUS_SUCCESS;
    case StatusCode::kNotFound:
      return DMI_STATUS_VDEV_NOT_EXIST;
    case StatusCode::kInvalidArgument:
      return DMI_STATUS_INVALID_ARGUMENTS;
    case StatusCode::kResourceExhausted:
      return DMI_STATUS_OUT_OF_RESOURCES;
    case StatusCode::kUnavailable:
      return DMI_STATUS_DEVICE_BUSY;
    case StatusCode::kUnimplemented:
      return DMI_STATUS_NOT_SUPPORTED;
    case StatusCode::kOutOfRange:
      return DMI_STATUS_INPUT_OUT_OF_BOUNDS;
    default:
      return DMI_STATUS_ERROR;
  }
}

void Fill(const hcudp::DmiDeviceInfo& in, int device_id, dmiDeviceInfo* out) {
  *out = dmiDeviceInfo{};
  std::strncpy(out->name, in.name.c_str(), sizeof(out->name) - 1);
  out->compute_unit_count = in.compute_units;
  out->global_mem_size = in.global_memory_bytes;
  out->usage_mem_size = in.used_memory_bytes;
  out->container_id = in.container_id;
  out->device_id = device_id;
}

// Every dmi* call except dmiGetStatusString passes here first. Non-zero:
// the status the call returns without acting.
dmiStatus Gate() {
  using hcudp::stub::Knob;
  const bool first = hcudp::stub::DmiCalls()++ == 0;
  const bool hymgr_down = Knob("hymgr").value_or("") == "down";
  if (first && hymgr_down) hcudp::stub::DmiNeverInitialised() = true;
  if (hcudp::stub::DmiNeverInitialised()) return DMI_STATUS_ERROR_NOT_INITIALIZED;
  if (hymgr_down) return DMI_STATUS_HYMGR_CONNECT_FAILED;  // down after a good start
  if (hcudp::stub::ConsumeFault("dmi_fail_count")) {
    return static_cast<dmiStatus>(hcudp::stub::KnobInt("dmi_fail_code", DMI_STATUS_ERROR));
  }
  return DMI_STATUS_SUCCESS;
}

// The vdev of knob stale_vdev while the driver does not know it (until a
// create gives its id out again), or -1.
int StaleVdev() {
  if (hcudp::stub::StaleVdevReused()) return -1;
  return static_cast<int>(hcudp::stub::KnobInt("stale_vdev", -1));
}

std::string VdevConfFile(int id) {
  return hcudp::stub::Knob("host_root").value_or("") + "/etc/vdev/vdev" + std::to_string(id) +
         ".conf";
}

// RESET_REQUIRED for calls about the SimNode card named by knob reset_required.
bool NeedsReset(int sim_card) { return hcudp::stub::KnobInt("reset_required", -1) == sim_card; }
// Knob query_fails: the card is counted but DMI queries about it fail.
bool QueryFails(int sim_card) { return hcudp::stub::KnobInt("query_fails", -1) == sim_card; }

#define HCUDP_STUB_GATE()                           \
  do {                                              \
    if (const dmiStatus gate = Gate(); gate != 0) { \
      return gate;                                  \
    }                                               \
  } while (0)

}  // namespace

HCUDP_STUB_API dmiStatus dmiGetStatusString(dmiStatus status, const char** text) {
  if (text == nullptr) return DMI_STATUS_INVALID_ARGUMENTS;
  switch (status) {
    case DMI_STATUS_SUCCESS:
      *text = "Success";
      break;
    case DMI_STATUS_DEVICE_BUSY:
      *text = "Device is busy";
      break;
    case DMI_STATUS_VDEV_NOT_EXIST:
      *text = "Virtual device does not exist";
      break;
    case DMI_STATUS_OUT_OF_RESOURCES:
      *text = "Out of resources";
      break;
    default:
      *text = "DMI error";
      break;
  }
  return DMI_STATUS_SUCCESS;
}

HCUDP_STUB_API dmiStatus dmiGetDeviceCount(int* count) {
  if (Sim() == nullptr) return DMI_STATUS_SYS_NODE_NOT_EXIST;
  HCUDP_STUB_GATE();
  if (count == nullptr) return DMI_STATUS_INVALID_ARGUMENTS;
  *count = static_cast<int>(hcudp::stub::VisibleCards().size());
  return DMI_STATUS_SUCCESS;
}

HCUDP_STUB_API dmiStatus dmiGetDeviceInfo(int device_id, dmiDeviceInfo* info) {
  if (Sim() == nullptr) return DMI_STATUS_SYS_NODE_NOT_EXIST;
  HCUDP_STUB_GATE();
  if (info == nullptr) return DMI_STATUS_INVALID_ARGUMENTS;
  const int card = hcudp::stub::SimIndexForDmi(device_id);
  if (card < 0) return DMI_STATUS_INVALID_ARGUMENTS;
  if (NeedsReset(card)) return DMI_STATUS_RESET_REQUIRED;
  if (QueryFails(card)) return DMI_STATUS_ERROR;
  StatusOr<hcudp::DmiDeviceInfo> got = Sim()->DeviceInfo(card);
  if (!got.ok()) return ToDmi(got.status());
  Fill(*got, device_id, info);
  return DMI_STATUS_SUCCESS;
}

HCUDP_STUB_API dmiStatus dmiGetMaxVDeviceCount(int* count) {
  if (Sim() == nullptr) return DMI_STATUS_SYS_NODE_NOT_EXIST;
  HCUDP_STUB_GATE();
  StatusOr<int> n = Sim()->MaxVhcusPerCard();
  if (!n.ok()) return ToDmi(n.status());
  *count = *n;
  return DMI_STATUS_SUCCESS;
}

HCUDP_STUB_API dmiStatus dmiGetVDeviceInfo(int vdevice_id, dmiDeviceInfo* info) {
  if (Sim() == nullptr) return DMI_STATUS_SYS_NODE_NOT_EXIST;
  HCUDP_STUB_GATE();
  if (info == nullptr) return DMI_STATUS_INVALID_ARGUMENTS;
  if (vdevice_id >= 0 && vdevice_id == StaleVdev()) return DMI_STATUS_VDEV_NOT_EXIST;
  StatusOr<hcudp::DmiDeviceInfo> got = Sim()->VhcuInfo(vdevice_id);
  if (!got.ok()) return ToDmi(got.status());
  Fill(*got, hcudp::stub::DmiIndexForSim(got->parent_card), info);
  return DMI_STATUS_SUCCESS;
}

HCUDP_STUB_API dmiStatus dmiGetDeviceRemainingInfo(int device_id, size_t* cus, size_t* memories) {
  if (Sim() == nullptr) return DMI_STATUS_SYS_NODE_NOT_EXIST;
  HCUDP_STUB_GATE();
  const int card = hcudp::stub::SimIndexForDmi(device_id);
  if (card < 0) return DMI_STATUS_INVALID_ARGUMENTS;
  if (NeedsReset(card)) return DMI_STATUS_RESET_REQUIRED;
  StatusOr<hcudp::DmiRemaining> got = Sim()->Remaining(card);
  if (!got.ok()) return ToDmi(got.status());
  *cus = static_cast<size_t>(got->compute_units);
  *memories = static_cast<size_t>(got->memory_bytes);
  return DMI_STATUS_SUCCESS;
}

HCUDP_STUB_API dmiStatus dmiCreateVDevices(int device_id, int vdev_count, int* vdev_cus,
                                           int* vdev_mem_size) {
  if (Sim() == nullptr) return DMI_STATUS_SYS_NODE_NOT_EXIST;
  HCUDP_STUB_GATE();
  int card = hcudp::stub::SimIndexForDmi(device_id);
  if (card < 0 || vdev_count <= 0 || vdev_cus == nullptr || vdev_mem_size == nullptr) {
    return DMI_STATUS_INVALID_ARGUMENTS;
  }
  if (NeedsReset(card)) return DMI_STATUS_RESET_REQUIRED;
  // A library that acts on another card than asked (the fault a wrong index
  // map causes): knob create_on_card=<SimNode index>.
  card = static_cast<int>(hcudp::stub::KnobInt("create_on_card", card));
  // A stale conf (knob stale_vdev) names an id the driver considers free:
  // the sim may hand it out (lowest free id first); if it does not, the
  // stale conf stays as it was.
  const int stale = StaleVdev();
  std::optional<std::string> stale_text;
  if (stale >= 0) {
    std::ifstream in(VdevConfFile(stale));
    if (in) {
      std::ostringstream text;
      text << in.rdbuf();
      stale_text = text.str();
      std::remove(VdevConfFile(stale).c_str());
    }
  }
  dmiStatus result = DMI_STATUS_SUCCESS;
  for (int i = 0; i < vdev_count && result == DMI_STATUS_SUCCESS; ++i) {
    if (vdev_cus[i] <= 0 || vdev_mem_size[i] <= 0) {
      result = DMI_STATUS_INVALID_ARGUMENTS;
      break;
    }
    int id = -1;
    const Status st =
        Sim()->CreateVhcu(card, vdev_cus[i], static_cast<uint64_t>(vdev_mem_size[i]), &id);
    if (!st.ok()) result = ToDmi(st);
    if (st.ok() && stale >= 0 && id == stale) hcudp::stub::StaleVdevReused() = true;
  }
  if (stale_text && !hcudp::stub::StaleVdevReused()) {
    std::ofstream(VdevConfFile(stale)) << *stale_text;
  }
  return result;
}

HCUDP_STUB_API dmiStatus dmiStopVDevice(int vdevice_id) {
  if (Sim() == nullptr) return DMI_STATUS_SYS_NODE_NOT_EXIST;
  HCUDP_STUB_GATE();
  if (vdevice_id >= 0 && vdevice_id == StaleVdev()) return DMI_STATUS_VDEV_NOT_EXIST;
  return ToDmi(Sim()->StopVhcu(vdevice_id));
}

HCUDP_STUB_API dmiStatus dmiDestroySingleVDevice(int vdevice_id) {
  if (Sim() == nullptr) return DMI_STATUS_SYS_NODE_NOT_EXIST;
  HCUDP_STUB_GATE();
  if (hcudp::stub::ConsumeFault("destroy_busy")) return DMI_STATUS_DEVICE_BUSY;
  if (vdevice_id >= 0 && vdevice_id == StaleVdev()) return DMI_STATUS_VDEV_NOT_EXIST;
  return ToDmi(Sim()->DestroyVhcu(vdevice_id));
}
