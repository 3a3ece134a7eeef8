// BackendWrapper: a Backend that forwards every call to another, as
// leveldb's EnvWrapper does, so that a decorator (the daemon's metrics, a
// test's fault injection) overrides only what it changes.
//
//   class Metered final : public hcudp::BackendWrapper {
//    public:
//     using BackendWrapper::BackendWrapper;
//     hcudp::Status DestroyVhcu(int id) override { ... target().DestroyVhcu(id) ... }
//   };
//
// Thread-safety: as the target's.
#ifndef HCUDP_BACKEND_WRAPPER_H_
#define HCUDP_BACKEND_WRAPPER_H_

#include <functional>
#include <string>
#include <vector>

#include "hcudp/backend.h"
#include "hcudp/export.h"

namespace hcudp {

class HCUDP_EXPORT BackendWrapper : public Backend {
 public:
  // `target` is not owned and must outlive the wrapper.
  explicit BackendWrapper(Backend& target) : target_(target) {}
  ~BackendWrapper() override;

  Backend& target() const { return target_; }

  StatusOr<NodeInventory> Discover() override;
  StatusOr<NodeInventory> Recheck() override;
  StatusOr<std::vector<CardHealthReport>> QueryHealth() override;
  StatusOr<Vhcu> CreateVhcu(int card, int compute_units, uint64_t memory_mib) override;
  Status DestroyVhcu(int id) override;
  const std::string& host_root() const override;
  std::vector<std::string> WatchPaths() const override;
  Status RestartRequired() const override;
  Status StartEvents(std::function<void(const BackendEvent&)> on_event) override;
  void StopEvents() override;

 private:
  Backend& target_;
};

}  // namespace hcudp

#endif  // HCUDP_BACKEND_WRAPPER_H_
