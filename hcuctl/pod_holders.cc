#include "pod_holders.h"

#include <grpcpp/grpcpp.h>

#include <chrono>

#include "plugin_client.h"
#include "podresources_v1.grpc.pb.h"

namespace hcuctl {
namespace {

// A device ID as the device plugin lists it, as what it holds; false for
// IDs that name no hardware of their own (hcunum, hcucores).
bool RefOfDeviceId(const std::string& id, hcudp::DeviceRef* ref) {
  if (id.rfind("vdev", 0) == 0 && id.size() > 4 &&
      id.find_first_not_of("0123456789", 4) == std::string::npos && id.size() < 12) {
    ref->kind = hcudp::DeviceRef::Kind::kVhcu;
    ref->vhcu_id = std::stoi(id.substr(4));
    return true;
  }
  if (id.rfind("MIG-", 0) == 0) {
    ref->kind = hcudp::DeviceRef::Kind::kMig;
    ref->mig_uuid = id.substr(4);
    return true;
  }
  // A BDF: "0000:0b:00.0".
  if (id.size() == 12 && id[4] == ':' && id[7] == ':' && id[10] == '.') {
    ref->kind = hcudp::DeviceRef::Kind::kCard;
    ref->card_bdf = id;
    return true;
  }
  return false;
}

}  // namespace

hcudp::StatusOr<std::vector<hcudp::Holder>> PodResourcesHolders(const std::string& socket) {
  auto stub = v1::PodResourcesLister::NewStub(
      grpc::CreateChannel(UnixTarget(socket), grpc::InsecureChannelCredentials()));
  grpc::ClientContext gctx;
  gctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
  v1::ListPodResourcesResponse resp;
  grpc::Status st = stub->List(&gctx, v1::ListPodResourcesRequest(), &resp);
  if (!st.ok()) {
    return hcudp::UnavailableError("kubelet's pod-resources at " + socket + ": " +
                                   st.error_message());
  }
  std::vector<hcudp::Holder> holders;
  for (const auto& pod : resp.pod_resources()) {
    for (const auto& c : pod.containers()) {
      for (const auto& d : c.devices()) {
        for (const auto& id : d.device_ids()) {
          hcudp::Holder h;
          if (!RefOfDeviceId(id, &h.device)) continue;
          h.source = hcudp::HolderSource::kPodResources;
          h.owner = pod.namespace_() + "/" + pod.name();
          h.describe = "pod " + pod.namespace_() + "/" + pod.name() + " (container " + c.name() +
                       ", " + d.resource_name() + ")";
          holders.push_back(std::move(h));
        }
      }
    }
  }
  return holders;
}

}  // namespace hcuctl
