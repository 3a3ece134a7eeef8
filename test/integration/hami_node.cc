#include "integration/hami_node.h"

#include <thread>

namespace hcudp::testing {

bool WaitUntil(const std::function<bool()>& done, milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(milliseconds(50));
  }
  return done();
}

std::vector<FakeRequest> AllocatePathRequests(const std::vector<FakeRequest>& all) {
  std::vector<FakeRequest> out;
  for (const auto& r : all) {
    if (r.watch) continue;
    if (r.method == "PATCH" && r.path == "/api/v1/nodes/node1" &&
        r.content_type.find("strategic") != std::string::npos) {
      continue;
    }
    if (r.path == "/api/v1/nodes/node1/status") continue;
    out.push_back(r);
  }
  return out;
}

bool IsPodList(const FakeRequest& r) {
  return r.method == "GET" && !r.watch &&
         (r.path == "/api/v1/pods" ||
          (r.path.size() > 5 && r.path.substr(r.path.size() - 5) == "/pods"));
}

}  // namespace hcudp::testing
