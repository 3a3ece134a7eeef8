// Register one resource with kubelet's Registration service at
// <device-plugin-path>/kubelet.sock (kubelet-contract.md §2).
#ifndef HCU_DP_DAEMON_REGISTRAR_H_
#define HCU_DP_DAEMON_REGISTRAR_H_

#include <chrono>
#include <string>

#include "hcudp/status.h"
#include "hcudp_internal/thread_annotations.h"

namespace grpc {
class ClientContext;
}  // namespace grpc

namespace hcudp::daemon {

inline constexpr std::string_view kKubeletSocket = "kubelet.sock";
inline constexpr std::string_view kDevicePluginApiVersion = "v1beta1";

struct RegisterParams {
  std::string kubelet_socket;  // absolute path of kubelet.sock
  std::string endpoint;        // our socket's base name
  std::string resource_name;   // hygon.com/...
  bool preferred_allocation = false;
  // kubelet dials back with a 10 s timeout before answering.
  std::chrono::milliseconds timeout{12000};
};

// Lets another thread cancel a Register call in flight (shutdown must not
// wait for a kubelet that does not answer). Thread-safe.
class RegistrationCanceller {
 public:
  // Cancels the call in flight, if any, and every later one.
  void Cancel();

 private:
  friend Status RegisterWithKubelet(const RegisterParams&, RegistrationCanceller*);
  // Returns false when already cancelled.
  bool Begin(grpc::ClientContext* context);
  void End();

  Mutex mu_;  // a leaf
  grpc::ClientContext* context_ HCUDP_GUARDED_BY(mu_) = nullptr;
  bool cancelled_ HCUDP_GUARDED_BY(mu_) = false;
};

// Unavailable when kubelet is unreachable or answers with an error
// (kubelet reports every rejection as UNKNOWN with a text message).
Status RegisterWithKubelet(const RegisterParams& params,
                           RegistrationCanceller* canceller = nullptr);

}  // namespace hcudp::daemon

#endif  // HCU_DP_DAEMON_REGISTRAR_H_
