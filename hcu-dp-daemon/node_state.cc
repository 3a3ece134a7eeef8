#include "node_state.h"

namespace hcudp::daemon {

const Resource* NodeSnapshot::FindResource(const std::string& name) const {
  for (const auto& r : resources) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

NodeState::NodeState() : current_(std::make_shared<NodeSnapshot>()) {}

std::shared_ptr<const NodeSnapshot> NodeState::Current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_;
}

void NodeState::Publish(NodeInventory inventory, std::vector<Resource> resources) {
  auto next = std::make_shared<NodeSnapshot>();
  next->inventory = std::move(inventory);
  next->resources = std::move(resources);
  {
    std::lock_guard<std::mutex> lock(mu_);
    next->generation = current_->generation + 1;
    current_ = std::move(next);
  }
  cv_.notify_all();
  if (listener_) listener_();
}

std::shared_ptr<const NodeSnapshot> NodeState::WaitNewer(uint64_t seen,
                                                         std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t wakes = wakes_;
  cv_.wait_for(lock, timeout, [&] { return current_->generation > seen || wakes_ != wakes; });
  return current_;
}

void NodeState::Wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++wakes_;
  }
  cv_.notify_all();
}

}  // namespace hcudp::daemon
