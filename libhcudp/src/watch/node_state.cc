#include "hcudp/node_state.h"

#include <condition_variable>

#include "hcudp_internal/thread_annotations.h"

namespace hcudp {

class NodeState::Impl {
 public:
  mutable Mutex mu;  // a leaf: nothing else is locked under it
  std::condition_variable_any cv;
  std::shared_ptr<const NodeSnapshot> current HCUDP_GUARDED_BY(mu) =
      std::make_shared<NodeSnapshot>();
  uint64_t wakes HCUDP_GUARDED_BY(mu) = 0;
  std::function<void()> listener;
};

const Resource* NodeSnapshot::FindResource(const std::string& name) const {
  for (const auto& r : resources) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

NodeState::NodeState() : impl_(std::make_unique<Impl>()) {}

NodeState::~NodeState() = default;

std::shared_ptr<const NodeSnapshot> NodeState::Current() const {
  MutexLock lock(impl_->mu);
  return impl_->current;
}

void NodeState::Publish(NodeInventory inventory, std::vector<Resource> resources) {
  auto next = std::make_shared<NodeSnapshot>();
  next->inventory = std::move(inventory);
  next->resources = std::move(resources);
  {
    MutexLock lock(impl_->mu);
    next->generation = impl_->current->generation + 1;
    impl_->current = std::move(next);
  }
  impl_->cv.notify_all();
  if (impl_->listener) impl_->listener();
}

std::shared_ptr<const NodeSnapshot> NodeState::WaitNewer(uint64_t seen,
                                                         std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  Impl& s = *impl_;
  MutexLock lock(s.mu);
  const uint64_t wakes = s.wakes;
  while (s.current->generation <= seen && s.wakes == wakes) {
    if (s.cv.wait_until(s.mu, deadline) == std::cv_status::timeout) break;
  }
  return s.current;
}

void NodeState::Wake() {
  {
    MutexLock lock(impl_->mu);
    ++impl_->wakes;
  }
  impl_->cv.notify_all();
}

void NodeState::set_listener(std::function<void()> listener) {
  impl_->listener = std::move(listener);
}

}  // namespace hcudp
