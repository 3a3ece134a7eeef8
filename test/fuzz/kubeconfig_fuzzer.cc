// Fuzzes ParseKubeconfig: any input gives a config or a non-empty error,
// never a crash; an accepted config is internally consistent.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "hcudp/kube_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // A base directory that does not exist: relative file references fail
  // instead of reading the fuzzer's working directory.
  hcudp::StatusOr<hcudp::KubeConfig> config =
      hcudp::ParseKubeconfig(text, "/nonexistent-hcudp-fuzz");
  if (!config.ok()) {
    if (config.status().message().empty()) std::abort();
    return 0;
  }
  const hcudp::KubeConfig& c = *config;
  if (c.server.rfind("http", 0) != 0) std::abort();
  if (c.client_cert_pem.empty() != c.client_key_pem.empty()) std::abort();
  if (c.insecure_skip_tls_verify && !c.ca_pem.empty()) std::abort();
  return 0;
}
