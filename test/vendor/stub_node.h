// StubNode: a SimNode rendered under a temporary host-root and served by the
// stand-in vendor libraries (test/stub_vendor), ready for a DlopenVendorLib.
// Knobs go to a per-test control file (stub_control.h).
#ifndef HCUDP_TEST_VENDOR_STUB_NODE_H_
#define HCUDP_TEST_VENDOR_STUB_NODE_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "hcudp/dlopen_vendor_lib.h"
#include "testing/testutil.h"

namespace hcudp::testing {

class StubNode {
 public:
  // `sim_node` is a path to a SimNode file (copied, so tests may edit it).
  explicit StubNode(const std::string& sim_node);
  ~StubNode();

  const std::string& host_root() const { return host_root_; }
  const std::string& sim_node() const { return sim_node_; }
  // Replaces the control file ("key=value" lines).
  void Control(const std::string& lines);

  // Options pointing at the stand-in hyhal with short, recorded sleeps.
  DlopenVendorLibOptions Options();
  // Every sleep the library asked for, in order.
  const std::vector<int>& sleeps_ms() const { return *sleeps_ms_; }

  // RSMI init refcount inside the stand-in library.
  int RsmiRefcount() const;
  // Successful rsmi_init calls in this process so far.
  int RsmiInitCalls() const;
  // rsmi_shut_down calls that found nothing to shut down, in this process.
  int RsmiUnbalancedShutdowns() const;

  static std::string StubHyhal();     // the built stand-in hyhal directory
  static std::string StubVariants();  // the variant libraries directory

 private:
  TempDir dir_;
  std::string host_root_;
  std::string sim_node_;
  std::string control_;
  void* core_ = nullptr;  // dlopen handle keeping the stub core loaded
  std::shared_ptr<std::vector<int>> sleeps_ms_ = std::make_shared<std::vector<int>>();
};

// A DlopenVendorLib opened and initialised with `options` (by default the
// node's); the test fails when either step fails.
std::unique_ptr<VendorLib> OpenAndInit(const DlopenVendorLibOptions& options);
std::unique_ptr<VendorLib> OpenAndInit(StubNode& node);

// The shipped K100_AI node, demo/nodes/k100ai-8.yaml (index order = PCI order).
std::string K100();

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_VENDOR_STUB_NODE_H_
