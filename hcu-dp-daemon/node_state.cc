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
  MutexLock lock(mu_);
  return current_;
}

void NodeState::Publish(NodeInventory inventory, std::vector<Resource> resources) {
  auto next = std::make_shared<NodeSnapshot>();
  next->inventory = std::move(inventory);
  next->resources = std::move(resources);
  {
    MutexLock lock(mu_);
    next->generation = current_->generation + 1;
    current_ = std::move(next);
  }
  cv_.notify_all();
  if (listener_) listener_();
}

std::shared_ptr<const NodeSnapshot> NodeState::WaitNewer(uint64_t seen,
                                                         std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(mu_);
  const uint64_t wakes = wakes_;
  while (current_->generation <= seen && wakes_ == wakes) {
    if (cv_.wait_until(mu_, deadline) == std::cv_status::timeout) break;
  }
  return current_;
}

void NodeState::Wake() {
  {
    MutexLock lock(mu_);
    ++wakes_;
  }
  cv_.notify_all();
}

}  // namespace hcudp::daemon
