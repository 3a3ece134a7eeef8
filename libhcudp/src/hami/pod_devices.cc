// hami.io/hcu-devices-to-allocate / -allocated (§5.3).
#include "hcudp/hami/pod_devices.h"

#include "hami/text_util.h"

namespace hcudp::hami {
namespace {

using internal::ContainsAny;
using internal::ParseInt;
using internal::Quote;
using internal::Split;

using internal::kInt32Max;

Status ContainerFieldError(size_t record, std::string_view field, std::string_view value,
                           std::string_view want) {
  return InvalidArgumentError("container device record " + std::to_string(record) + ": field " +
                              std::string(field) + " " + Quote(value) + " is not " +
                              std::string(want));
}

StatusOr<ContainerDevice> DecodeContainerRecord(size_t n, std::string_view record) {
  std::vector<std::string_view> f = Split(record, ',');
  if (f.size() != 4) {
    return InvalidArgumentError("container device record " + std::to_string(n) + " " +
                                Quote(record) + " has " + std::to_string(f.size()) +
                                " fields, want 4 (UUID,Type,Usedmem,Usedcores)");
  }
  ContainerDevice d;
  if (f[0].empty() || ContainsAny(f[0], ";"))
    return ContainerFieldError(n, "UUID", f[0], "a non-empty UUID without ';'");
  d.uuid = std::string(f[0]);
  if (f[1].empty() || ContainsAny(f[1], ";"))
    return ContainerFieldError(n, "Type", f[1], "a non-empty type without ';'");
  d.type = std::string(f[1]);
  auto mem = ParseInt(f[2], 0, kInt32Max);
  if (!mem) return ContainerFieldError(n, "Usedmem", f[2], "a MiB count >= 0");
  d.used_mem_mib = static_cast<int32_t>(*mem);
  auto cores = ParseInt(f[3], 0, 100);
  if (!cores) return ContainerFieldError(n, "Usedcores", f[3], "a percentage 0..100");
  d.used_cores_percent = static_cast<int32_t>(*cores);
  return d;
}

Status CheckDevice(size_t i, const ContainerDevice& d) {
  for (auto [name, value] :
       {std::pair<std::string_view, std::string_view>{"UUID", d.uuid}, {"Type", d.type}}) {
    if (value.empty() || ContainsAny(value, ",:;")) {
      return InvalidArgumentError("container device " + std::to_string(i) + ": " +
                                  std::string(name) + " " + Quote(value) +
                                  " is empty or contains one of , : ;");
    }
  }
  if (d.used_mem_mib < 0) {
    return InvalidArgumentError("container device " + std::to_string(i) + ": Usedmem " +
                                std::to_string(d.used_mem_mib) + " is negative");
  }
  if (d.used_cores_percent < 0 || d.used_cores_percent > 100) {
    return InvalidArgumentError("container device " + std::to_string(i) + ": Usedcores " +
                                std::to_string(d.used_cores_percent) + " is not 0..100");
  }
  return OkStatus();
}

}  // namespace

bool ContainerDevice::operator==(const ContainerDevice& o) const {
  return uuid == o.uuid && type == o.type && used_mem_mib == o.used_mem_mib &&
         used_cores_percent == o.used_cores_percent;
}

StatusOr<std::string> EncodeContainerDevices(const ContainerDevices& devices) {
  std::string out;
  for (size_t i = 0; i < devices.size(); ++i) {
    const ContainerDevice& d = devices[i];
    HCUDP_RETURN_IF_ERROR(CheckDevice(i, d));
    out += d.uuid + "," + d.type + "," + std::to_string(d.used_mem_mib) + "," +
           std::to_string(d.used_cores_percent) + ":";
  }
  return out;
}

StatusOr<ContainerDevices> DecodeContainerDevices(std::string_view value) {
  return internal::DecodeColonTerminated<ContainerDevice>(value, "container devices",
                                                          DecodeContainerRecord);
}

StatusOr<std::string> EncodePodDevices(const PodDevices& pod) {
  std::string out;
  for (size_t c = 0; c < pod.size(); ++c) {
    StatusOr<std::string> part = EncodeContainerDevices(pod[c]);
    if (!part.ok()) return part.status().WithContext("container " + std::to_string(c));
    out += *part + ";";
  }
  return out;
}

StatusOr<PodDevices> DecodePodDevices(std::string_view value) {
  PodDevices pod;
  if (value.empty()) return pod;
  // HAMi ends each container in ';'. Writers that join with ';' (Volcano's
  // Hygon vDCU code; its vHCU twin uses these keys) leave the final one out:
  // read as HAMi's decoder, which the vendor runs, reads them.
  if (value.back() == ';') value.remove_suffix(1);
  std::vector<std::string_view> parts = Split(value, ';');
  for (size_t c = 0; c < parts.size(); ++c) {
    StatusOr<ContainerDevices> devices = DecodeContainerDevices(parts[c]);
    if (!devices.ok()) return devices.status().WithContext("container " + std::to_string(c));
    pod.push_back(std::move(devices).value());
  }
  return pod;
}

PodDevices DropEmptyContainers(const PodDevices& pod) {
  PodDevices out;
  for (const ContainerDevices& c : pod) {
    if (!c.empty()) out.push_back(c);
  }
  return out;
}

StatusOr<std::string> VendorEraseFirstContainer(std::string_view value, ContainerDevices* served) {
  HCUDP_ASSIGN_OR_RETURN(PodDevices pod, DecodePodDevices(value));
  PodDevices hami_view = DropEmptyContainers(pod);
  if (hami_view.empty()) {
    return FailedPreconditionError("device request not found: no container in " + Quote(value) +
                                   " has devices left");
  }
  if (served != nullptr) *served = hami_view.front();
  hami_view.front().clear();
  return EncodePodDevices(hami_view);
}

bool HasPendingDevices(const PodDevices& pod) {
  for (const ContainerDevices& c : pod) {
    if (!c.empty()) return true;
  }
  return false;
}

}  // namespace hcudp::hami
