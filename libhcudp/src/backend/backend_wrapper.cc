#include "hcudp/backend_wrapper.h"

namespace hcudp {

BackendWrapper::~BackendWrapper() = default;

StatusOr<NodeInventory> BackendWrapper::Discover() { return target_.Discover(); }
StatusOr<NodeInventory> BackendWrapper::Recheck() { return target_.Recheck(); }
StatusOr<std::vector<CardHealthReport>> BackendWrapper::QueryHealth() {
  return target_.QueryHealth();
}
StatusOr<Vhcu> BackendWrapper::CreateVhcu(int card, int compute_units, uint64_t memory_mib) {
  return target_.CreateVhcu(card, compute_units, memory_mib);
}
Status BackendWrapper::DestroyVhcu(int id) { return target_.DestroyVhcu(id); }
const std::string& BackendWrapper::host_root() const { return target_.host_root(); }
std::vector<std::string> BackendWrapper::WatchPaths() const { return target_.WatchPaths(); }
Status BackendWrapper::RestartRequired() const { return target_.RestartRequired(); }
Status BackendWrapper::StartEvents(std::function<void(const BackendEvent&)> on_event) {
  return target_.StartEvents(std::move(on_event));
}
void BackendWrapper::StopEvents() { target_.StopEvents(); }

}  // namespace hcudp
