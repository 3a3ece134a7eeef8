// The HAMi pieces on the simulated K100_AI node (HostBackend + SimVendorLib):
// the worked example's 30 % / 8192 MiB request becomes a 36 CU vHCU with a
// conf and a mark file, and both go when the pod does.
#include <boost/test/unit_test.hpp>

#include "hcudp/backend.h"
#include "hcudp/hami/node_devices.h"
#include "hcudp/hami/pod_devices.h"
#include "hcudp/hami/size_rule.h"
#include "hcudp/vhcu_manager.h"
#include "testing/testutil.h"

namespace hcudp {
namespace {

BOOST_AUTO_TEST_CASE(worked_example_on_the_simulated_k100_node) {
  testing::TempDir root;
  Options options;
  options.backend = BackendKind::kSim;
  options.sim_node_path = testing::SourcePath("demo/nodes/k100ai-8.yaml");
  options.host_root = root.path();
  auto backend = OpenBackend(options);
  BOOST_REQUIRE_MESSAGE(backend.ok(), backend.status().ToString());
  auto inventory = (*backend)->Discover();
  BOOST_REQUIRE(inventory.ok());

  // The scheduler's request for card 0, by serial.
  const Card& card0 = *inventory->FindCard(0);
  auto request = hami::DecodeContainerDevices("HCU-" + card0.serial + ",HCU,8192,30:");
  BOOST_REQUIRE(request.ok());
  auto plans = hami::PlanContainerDevices(*request, *inventory);
  BOOST_REQUIRE(plans.ok());
  BOOST_REQUIRE(plans->at(0).create_vhcu);
  BOOST_TEST(plans->at(0).vhcu_compute_units == 36);

  VhcuManagerOptions manager_options;
  manager_options.host_root = root.path();
  manager_options.fresh_mark_grace = std::chrono::milliseconds(0);
  VhcuManager manager(backend->get(), manager_options);
  BOOST_REQUIRE(manager.Recover([](const std::string&) { return false; }).ok());
  auto created = manager.CreateVhcu({"pod-uid-1", "hcu-dynamic-vhcu-demo"}, 0,
                                    plans->at(0).vhcu_compute_units, plans->at(0).vhcu_memory_mib);
  BOOST_REQUIRE_MESSAGE(created.ok(), created.status().ToString());
  BOOST_TEST(created->vhcu.compute_units == 36);
  BOOST_TEST(created->vhcu.memory_mib == 8192u);
  std::string conf = root.Join("etc/vdev/vdev" + std::to_string(created->vhcu.id) + ".conf");
  BOOST_TEST(testing::PathExists(conf));
  BOOST_TEST(testing::PathExists(root.Join("etc/vdev/dynamic/pod-uid-1_hcu-dynamic-vhcu-demo_0_" +
                                           std::to_string(created->vhcu.id))));

  // The remaining annotation now shows it (4 - 1 slots, 84 of 120 CUs free).
  auto after = (*backend)->Discover();
  BOOST_REQUIRE(after.ok());
  hami::NodeRegistration reg = hami::BuildNodeRegistration(*after, 4);
  BOOST_TEST(reg.remaining[0].count == 3);
  BOOST_TEST(reg.remaining[0].devmem_mib == 65520 - 8192);
  BOOST_TEST(reg.remaining[0].devcore_percent == 70);

  auto swept = manager.Reconcile(std::set<std::string>{});
  BOOST_REQUIRE_MESSAGE(swept.ok(), swept.status().ToString());
  BOOST_TEST(swept->destroyed == 1);
  BOOST_TEST(!testing::PathExists(conf));
  BOOST_TEST(ListMarkFiles(root.path(), nullptr)->empty());
}

}  // namespace
}  // namespace hcudp
