#include "stub_node.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <boost/test/unit_test.hpp>

#include "hcudp/sim_node.h"

namespace hcudp::testing {

std::string StubNode::StubHyhal() { return HCUDP_STUB_HYHAL; }
std::string StubNode::StubVariants() { return HCUDP_STUB_VARIANTS; }

StubNode::StubNode(const std::string& sim_node)
    : host_root_(dir_.Join("root")),
      sim_node_(dir_.Join("node.yaml")),
      control_(dir_.Join("control")) {
  WriteFile(sim_node_, ReadFile(sim_node));
  WriteFile(control_, "");
  StatusOr<SimNode> node = LoadSimNode(sim_node_);
  BOOST_REQUIRE_MESSAGE(node.ok(), node.status().ToString());
  BOOST_REQUIRE(RenderSimNode(*node, host_root_).ok());
  setenv("HCUDP_STUB_SIM_NODE", sim_node_.c_str(), 1);
  setenv("HCUDP_STUB_HOST_ROOT", host_root_.c_str(), 1);
  setenv("HCUDP_STUB_CONTROL", control_.c_str(), 1);
  core_ = dlopen((StubHyhal() + "/lib/libhcudp_stub_core.so").c_str(),
                 RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  BOOST_REQUIRE_MESSAGE(core_ != nullptr, dlerror());
  auto reset = reinterpret_cast<void (*)()>(dlsym(core_, "hcudp_stub_reset"));
  BOOST_REQUIRE(reset != nullptr);
  reset();
}

StubNode::~StubNode() {
  if (core_ != nullptr) dlclose(core_);
  unsetenv("HCUDP_STUB_CONTROL");
}

void StubNode::Control(const std::string& lines) { WriteFile(control_, lines); }

DlopenVendorLibOptions StubNode::Options() {
  DlopenVendorLibOptions o;
  o.hyhal_path = StubHyhal();
  o.host_root = host_root_;
  o.driver_wait_attempts = 3;
  o.init_retries = 3;
  o.count_mismatch_retries = 2;
  o.healthcheck_timeout_ms = 5000;
  std::shared_ptr<std::vector<int>> sleeps = sleeps_ms_;
  o.sleep = [sleeps](std::chrono::milliseconds d) {
    sleeps->push_back(static_cast<int>(d.count()));
  };
  return o;
}

int StubNode::RsmiRefcount() const {
  auto refcount = reinterpret_cast<int (*)()>(dlsym(core_, "hcudp_stub_rsmi_refcount"));
  return refcount != nullptr ? refcount() : -1;
}

}  // namespace hcudp::testing

namespace hcudp::testing {

int StubNode::RsmiInitCalls() const {
  auto calls = reinterpret_cast<int (*)()>(dlsym(core_, "hcudp_stub_rsmi_init_calls"));
  return calls != nullptr ? calls() : -1;
}

}  // namespace hcudp::testing

namespace hcudp::testing {

int StubNode::RsmiUnbalancedShutdowns() const {
  auto count = reinterpret_cast<int (*)()>(dlsym(core_, "hcudp_stub_rsmi_unbalanced_shutdowns"));
  return count != nullptr ? count() : -1;
}

std::unique_ptr<VendorLib> OpenAndInit(const DlopenVendorLibOptions& options) {
  StatusOr<std::unique_ptr<VendorLib>> lib = NewDlopenVendorLib(options);
  BOOST_REQUIRE_MESSAGE(lib.ok(), lib.status().ToString());
  const Status st = (*lib)->Init();
  BOOST_REQUIRE_MESSAGE(st.ok(), st.ToString());
  return std::move(lib).value();
}

std::unique_ptr<VendorLib> OpenAndInit(StubNode& node) { return OpenAndInit(node.Options()); }

std::string K100() { return SourcePath("demo/nodes/k100ai-8.yaml"); }

}  // namespace hcudp::testing
