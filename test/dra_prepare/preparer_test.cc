// Prepare/Unprepare of each device kind on the shipped simulated nodes.
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <set>
#include <thread>

#include "dra_prepare/prepare_fixture.h"
#include "hcudp/dra/checkpoint.h"

namespace hcudp::testing {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

BOOST_AUTO_TEST_CASE(whole_card_gets_the_card_cdi_id_and_a_whole_card_mark) {
  SimDraNode node("k100ai-8.yaml");
  BOOST_REQUIRE(node.preparer->Recover().ok());
  const std::string spec = node.Path("/var/run/cdi/dra.hygon.com-hcu.json");
  BOOST_TEST(CdiSchemaErrors(spec) == "");
  BOOST_TEST(ReadFile(spec).find("\"cdiVersion\": \"0.5.0\"") != std::string::npos);

  auto ref =
      node.AllocateAndStore(ClaimJson("uid-1", "c1", "[" + ExactRequest("hcu") + "]"), "pod-1");
  auto answer = node.preparer->Prepare(ref);
  BOOST_REQUIRE_MESSAGE(answer.ok(), answer.status().ToString());
  BOOST_REQUIRE_MESSAGE(answer->error.empty(), answer->error);
  BOOST_REQUIRE(answer->devices.size() == 1u);
  const auto& d = answer->devices[0];
  BOOST_TEST(d.device_name == dra::CardDeviceName(node.Inventory().cards[0]));
  BOOST_TEST(d.pool_name == "node-a");
  BOOST_TEST(d.request_names == std::vector<std::string>{"hcu"});
  BOOST_TEST(d.cdi_device_ids == std::vector<std::string>{"dra.hygon.com/hcu=" + d.device_name});
  BOOST_TEST(d.share_id.has_value());  // multi-allocatable: the allocator gave one
  BOOST_TEST(ReadFile(spec).find("\"name\": \"" + d.device_name + "\"") != std::string::npos);
  BOOST_TEST(node.Inventory().vhcus.empty());  // no vHCU for a whole card
  BOOST_TEST(Contains(node.Files("/etc/vdev/dynamic"), "pod-1_hcu_0_-1"));
  BOOST_TEST(Contains(node.Files("/var/lib/hcu-device-plugin/dra"), "uid-1.json"));

  BOOST_REQUIRE(node.preparer->Unprepare(ref).ok());
  BOOST_TEST(node.Files("/etc/vdev/dynamic").empty());
  BOOST_TEST(node.Files("/var/lib/hcu-device-plugin/dra").empty());
  BOOST_TEST(node.preparer->Unprepare(ref).ok());  // idempotent
}

BOOST_AUTO_TEST_CASE(consumed_capacity_makes_a_vhcu_of_exactly_those_amounts) {
  SimDraNode node("k100ai-8.yaml");
  BOOST_REQUIRE(node.preparer->Recover().ok());
  int changes = 0;
  dra::PreparerOptions o;
  o.on_change = [&] { ++changes; };
  node.Restart(o);
  BOOST_REQUIRE(node.preparer->Recover().ok());
  auto ref = node.AllocateAndStore(
      ClaimJson("uid-2", "c2", "[" + ExactRequest("hcu", R"({"cores":"30","memory":"8Gi"})") + "]"),
      "pod-2");
  auto answer = node.preparer->Prepare(ref);
  BOOST_REQUIRE_MESSAGE(answer.ok() && answer->error.empty(),
                        (answer.ok() ? answer->error : answer.status().ToString()));
  NodeInventory inv = node.Inventory();
  BOOST_REQUIRE(inv.vhcus.size() == 1u);
  const Vhcu& v = inv.vhcus[0];
  BOOST_TEST(v.compute_units == 30);
  BOOST_TEST(v.memory_mib == 8192u);
  const auto& d = answer->devices[0];
  BOOST_TEST(d.cdi_device_ids ==
             std::vector<std::string>{"dra.hygon.com/vhcu=uid-2-vdev" + std::to_string(v.id)});
  BOOST_TEST(d.share_id.value_or("") == "share-1");
  const std::string spec = node.Path("/var/run/cdi/dra.hygon.com-vhcu_uid-2.json");
  BOOST_TEST(CdiSchemaErrors(spec) == "");
  BOOST_TEST(ReadFile(spec).find("/etc/vdev/docker/vdev" + std::to_string(v.id) + ".conf") !=
             std::string::npos);
  BOOST_TEST(Contains(node.Files("/etc/vdev/dynamic"),
                      "pod-2_hcu_" + std::to_string(v.card) + "_" + std::to_string(v.id)));
  BOOST_TEST(changes == 1);
  BOOST_REQUIRE(node.preparer->Prepared().size() == 1u);
  BOOST_TEST(node.preparer->Prepared()[0].devices[0].card_bdf == v.card_bdf);

  // Idempotent: the same answer, no second vHCU; a wiped spec comes back.
  std::remove(spec.c_str());
  auto again = node.preparer->Prepare(ref);
  BOOST_REQUIRE(again.ok() && again->error.empty());
  BOOST_TEST(again->devices[0].cdi_device_ids == d.cdi_device_ids);
  BOOST_TEST(node.Inventory().vhcus.size() == 1u);
  BOOST_TEST(PathExists(spec));

  BOOST_REQUIRE(node.preparer->Unprepare(ref).ok());
  BOOST_TEST(node.Inventory().vhcus.empty());
  BOOST_TEST(!PathExists(spec));
  BOOST_TEST(node.Files("/etc/vdev/dynamic").empty());
  BOOST_TEST(node.preparer->Prepared().empty());
  BOOST_TEST(changes == 2);
  BOOST_TEST(node.preparer->Unprepare(ref).ok());
}

BOOST_AUTO_TEST_CASE(sub_request_answers_the_base_request_name) {
  SimDraNode node("k100ai-8.yaml");
  BOOST_REQUIRE(node.preparer->Recover().ok());
  const std::string req =
      R"({"name":"pick","firstAvailable":[{"name":"huge","deviceClassName":"dra.hygon.com","capacity":{"requests":{"cores":"500"}}},{"name":"small","deviceClassName":"dra.hygon.com","capacity":{"requests":{"cores":"15","memory":"4Gi"}}}]})";
  auto ref = node.AllocateAndStore(ClaimJson("uid-3", "c3", "[" + req + "]"), "pod-3");
  auto answer = node.preparer->Prepare(ref);
  BOOST_REQUIRE(answer.ok() && answer->error.empty());
  BOOST_TEST(answer->devices[0].request_names == std::vector<std::string>{"pick"});
  BOOST_REQUIRE(node.Inventory().vhcus.size() == 1u);
  BOOST_TEST(node.Inventory().vhcus[0].compute_units == 15);
  // The mark names the base request (no '/' in a file name).
  auto marks = node.Files("/etc/vdev/dynamic");
  BOOST_REQUIRE(marks.size() == 1u);
  BOOST_TEST(marks[0].rfind("pod-3_pick_", 0) == 0u);
  BOOST_REQUIRE(node.preparer->Unprepare(ref).ok());
}

BOOST_AUTO_TEST_CASE(pre_split_vhcu_gets_a_claim_spec_and_is_not_destroyed) {
  SimDraNode node("z100l-mixed.yaml");
  BOOST_REQUIRE(node.preparer->Recover().ok());
  const size_t before = node.Inventory().vhcus.size();
  auto ref =
      node.AllocateAndStore(ClaimJson("uid-4", "c4", "[" + ExactRequest("v") + "]"), "pod-4");
  auto answer = node.preparer->Prepare(ref);
  BOOST_REQUIRE_MESSAGE(answer.ok() && answer->error.empty(),
                        (answer.ok() ? answer->error : answer.status().ToString()));
  // The allocator takes the first free device (card 0 whole); four more are
  // card 1 whole and three pre-split vHCUs of card 2.
  auto ref2 = node.AllocateAndStore(ClaimJson("uid-5", "c5", "[" + ExactRequest("v", "", 4) + "]"),
                                    "pod-5");
  auto answer2 = node.preparer->Prepare(ref2);
  BOOST_REQUIRE_MESSAGE(answer2.ok() && answer2->error.empty(),
                        (answer2.ok() ? answer2->error : answer2.status().ToString()));
  bool saw_vhcu = false;
  for (const auto& d : answer2->devices) {
    if (d.device_name.find("-vdev") == std::string::npos) continue;
    saw_vhcu = true;
    BOOST_TEST(d.cdi_device_ids[0].rfind("dra.hygon.com/vhcu=uid-5-vdev", 0) == 0u);
  }
  BOOST_TEST(saw_vhcu);
  BOOST_TEST(CdiSchemaErrors(node.Path("/var/run/cdi/dra.hygon.com-vhcu_uid-5.json")) == "");
  BOOST_REQUIRE(node.preparer->Unprepare(ref2).ok());
  BOOST_REQUIRE(node.preparer->Unprepare(ref).ok());
  BOOST_TEST(node.Inventory().vhcus.size() == before);  // pre-split ones stay
}

BOOST_AUTO_TEST_CASE(mig_instance_is_prepared_from_its_conf) {
  SimDraNode node("bw-mig.yaml");
  BOOST_REQUIRE(node.preparer->Recover().ok());
  auto ref =
      node.AllocateAndStore(ClaimJson("uid-6", "c6", "[" + ExactRequest("m") + "]"), "pod-6");
  auto answer = node.preparer->Prepare(ref);
  BOOST_REQUIRE_MESSAGE(answer.ok() && answer->error.empty(),
                        (answer.ok() ? answer->error : answer.status().ToString()));
  const auto& d = answer->devices[0];
  BOOST_TEST(d.device_name.find("-mig-") != std::string::npos);
  BOOST_TEST(d.cdi_device_ids[0] == "dra.hygon.com/vhcu=uid-6-" + d.device_name);
  const std::string spec = node.Path("/var/run/cdi/dra.hygon.com-vhcu_uid-6.json");
  BOOST_TEST(CdiSchemaErrors(spec) == "");
  BOOST_TEST(ReadFile(spec).find("/etc/dmi_mig_config/ci/") != std::string::npos);
  // A second claim on the same instance is refused (exclusive device) with
  // a per-claim error: kubelet's retry succeeds once the first is gone.
  std::string copy =
      "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
      "\"metadata\":{\"namespace\":\"ns1\",\"name\":\"c7\",\"uid\":\"uid-7\"},"
      "\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"m\","
      "\"driver\":\"dra.hygon.com\",\"pool\":\"node-a\",\"device\":\"" +
      d.device_name + "\"}]}}}}";
  node.claims.Put(copy);
  auto second = node.preparer->Prepare({"ns1", "c7", "uid-7"});
  BOOST_REQUIRE(second.ok());
  BOOST_TEST(second->error.find(d.device_name + " is already prepared for claim ns1/c6") !=
                 std::string::npos,
             second->error);
  BOOST_TEST(second->devices.empty());
  BOOST_REQUIRE(node.preparer->Unprepare(ref).ok());
  BOOST_TEST(!PathExists(spec));
  auto retried = node.preparer->Prepare({"ns1", "c7", "uid-7"});
  BOOST_REQUIRE(retried.ok());
  BOOST_TEST(retried->error.empty(), retried->error);
  BOOST_REQUIRE(node.preparer->Unprepare({"ns1", "c7", "uid-7"}).ok());
}

BOOST_AUTO_TEST_CASE(errors_split_into_rpc_errors_and_per_claim_retries) {
  SimDraNode node("k100ai-8.yaml");
  BOOST_REQUIRE(node.preparer->Recover().ok());
  auto ref = node.AllocateAndStore(ClaimJson("uid-8", "c8", "[" + ExactRequest("hcu") + "]"), "p");
  // Replaced: same name, another UID.
  auto replaced = node.preparer->Prepare({"ns1", "c8", "uid-other"});
  BOOST_REQUIRE(!replaced.ok());
  BOOST_TEST(replaced.status().message().find("replaced") != std::string::npos);
  // Not allocated.
  node.claims.Put(ClaimJson("uid-9", "c9", "[" + ExactRequest("hcu") + "]"));
  auto unallocated = node.preparer->Prepare({"ns1", "c9", "uid-9"});
  BOOST_REQUIRE(!unallocated.ok());
  BOOST_TEST(unallocated.status().message().find("not allocated") != std::string::npos);
  // A device this node does not have, and another pool.
  for (const auto& [device, pool] : std::vector<std::pair<std::string, std::string>>{
           {"hcu-0000-ff-00-0", "node-a"}, {"hcu-0000-09-00-0", "node-b"}}) {
    node.claims.Put(
        "{\"metadata\":{\"namespace\":\"ns1\",\"name\":\"c10\",\"uid\":\"uid-10\"},\"status\":{"
        "\"allocation\":{\"devices\":{\"results\":[{\"request\":\"r\",\"driver\":\"dra.hygon.com\","
        "\"pool\":\"" +
        pool + "\",\"device\":\"" + device + "\"}]}}}}");
    auto bad = node.preparer->Prepare({"ns1", "c10", "uid-10"});
    BOOST_TEST(!bad.ok(), device);
  }
  // API down: a per-claim error, nothing made.
  node.claims.down = true;
  auto down = node.preparer->Prepare(ref);
  BOOST_REQUIRE(down.ok());
  BOOST_TEST(down->error.find("connection refused") != std::string::npos);
  BOOST_TEST(node.Files("/var/lib/hcu-device-plugin/dra").empty());
  // Bad UID from kubelet never becomes a path.
  BOOST_TEST(!node.preparer->Prepare({"ns1", "c8", "../x"}).ok());
  BOOST_TEST(!node.preparer->Unprepare({"ns1", "c8", "../x"}).ok());
}

}  // namespace
}  // namespace hcudp::testing

namespace hcudp::testing {
namespace {

// The sim backend whose DestroyVhcu answers "busy" while `busy` > 0.
class BusyBackend final : public Backend {
 public:
  explicit BusyBackend(Backend* inner) : inner_(inner) {}
  StatusOr<NodeInventory> Discover() override { return inner_->Discover(); }
  StatusOr<std::vector<CardHealthReport>> QueryHealth() override { return inner_->QueryHealth(); }
  StatusOr<Vhcu> CreateVhcu(int card, int cu, uint64_t mib) override {
    return inner_->CreateVhcu(card, cu, mib);
  }
  Status DestroyVhcu(int id) override {
    if (pass > 0) {
      --pass;
      return inner_->DestroyVhcu(id);
    }
    if (busy > 0) {
      --busy;
      return UnavailableError("vHCU " + std::to_string(id) + " is busy");
    }
    return inner_->DestroyVhcu(id);
  }
  const std::string& host_root() const override { return inner_->host_root(); }
  std::vector<std::string> WatchPaths() const override { return inner_->WatchPaths(); }
  int pass = 0;  // destroys that succeed before the busy ones
  int busy = 0;

 private:
  Backend* inner_;
};

// A manager and a preparer over `node` whose vHCU destroys go through a
// BusyBackend.
struct BusyNode {
  explicit BusyNode(SimDraNode& node)
      : busy(node.backend.get()), manager(&busy, Options(node), node.clock) {
    dra::PreparerOptions po;
    po.host_root = node.Root();
    preparer =
        std::make_unique<dra::Preparer>(&busy, &manager, node.claims.Fetcher(), po, node.clock);
  }
  static VhcuManagerOptions Options(SimDraNode& node) {
    VhcuManagerOptions mo;
    mo.host_root = node.Root();
    return mo;
  }
  BusyBackend busy;
  VhcuManager manager;
  std::unique_ptr<dra::Preparer> preparer;
};

BOOST_AUTO_TEST_CASE(unprepare_never_reports_success_while_the_vhcu_is_left) {
  SimDraNode node("k100ai-8.yaml");
  BusyNode b(node);
  BOOST_REQUIRE(b.preparer->Recover().ok());
  auto ref = node.AllocateAndStore(
      ClaimJson("uid-b", "b", "[" + ExactRequest("hcu", R"({"cores":"30","memory":"8Gi"})") + "]"),
      "pod-b");
  auto a = b.preparer->Prepare(ref);
  BOOST_REQUIRE(a.ok() && a->error.empty());
  b.busy.busy = 2;
  Status first = b.preparer->Unprepare(ref);
  BOOST_TEST((first.code() == StatusCode::kUnavailable), first.ToString());
  BOOST_TEST(node.Inventory().vhcus.size() == 1u);
  BOOST_TEST(b.preparer->Prepared().size() == 1u);  // still recorded
  BOOST_TEST(!b.preparer->Unprepare(ref).ok());     // busy once more
  BOOST_REQUIRE(b.preparer->Unprepare(ref).ok());   // kubelet's next retry
  BOOST_TEST(node.Inventory().vhcus.empty());
  BOOST_TEST(node.Files("/etc/vdev/dynamic").empty());
  BOOST_TEST(node.Files("/var/lib/hcu-device-plugin/dra").empty());
}

// The vHCU indexes of `pod`'s marks ("<pod>_<request>_<card>_<vHCU>").
std::set<std::string> MarkedVhcus(SimDraNode& node, const std::string& pod) {
  std::set<std::string> out;
  for (const std::string& m : node.Files("/etc/vdev/dynamic")) {
    if (m.rfind(pod + "_", 0) == 0) out.insert(m.substr(m.rfind('_') + 1));
  }
  return out;
}

// The vHCU indexes an answer's CDI IDs name ("...=<claim UID>-vdev<N>").
std::set<std::string> NamedVhcus(const dra::PrepareAnswer& answer) {
  std::set<std::string> out;
  for (const auto& d : answer.devices) {
    for (const std::string& id : d.cdi_device_ids) out.insert(id.substr(id.rfind("-vdev") + 5));
  }
  return out;
}

// An Unprepare that destroyed one vHCU of a claim and failed on the next
// (busy), then a Prepare of that claim (kubelet retrying it, re-admission):
// the answer must not name the destroyed vHCU, whose index the driver may
// already have given to another claim's vHCU.
BOOST_AUTO_TEST_CASE(prepare_after_a_half_failed_unprepare_names_only_live_vhcus) {
  SimDraNode node("k100ai-8.yaml");
  BusyNode b(node);
  BOOST_REQUIRE(b.preparer->Recover().ok());
  const std::string size = R"({"cores":"30","memory":"8Gi"})";
  auto ref = node.AllocateAndStore(
      ClaimJson("uid-h", "h", "[" + ExactRequest("a", size) + "," + ExactRequest("b", size) + "]"),
      "pod-h");
  auto first = b.preparer->Prepare(ref);
  BOOST_REQUIRE(first.ok() && first->error.empty() && first->devices.size() == 2u);
  b.busy.pass = 1;  // the first vHCU goes, the second is busy
  b.busy.busy = 1;
  Status st = b.preparer->Unprepare(ref);
  BOOST_REQUIRE_MESSAGE(st.code() == StatusCode::kUnavailable, st.ToString());
  BOOST_REQUIRE(node.Inventory().vhcus.size() == 1u);
  // Another claim gets a vHCU of the same size: maybe under the freed index.
  auto other = node.AllocateAndStore(ClaimJson("uid-x", "x", "[" + ExactRequest("hcu", size) + "]"),
                                     "pod-x");
  auto ox = b.preparer->Prepare(other);
  BOOST_REQUIRE(ox.ok() && ox->error.empty());

  auto again = b.preparer->Prepare(ref);
  BOOST_REQUIRE(again.ok());
  BOOST_REQUIRE_MESSAGE(again->error.empty(), again->error);
  const std::set<std::string> named = NamedVhcus(*again);
  const std::set<std::string> ours = MarkedVhcus(node, "pod-h");
  const std::set<std::string> theirs = MarkedVhcus(node, "pod-x");
  BOOST_TEST(named == ours, "CDI IDs name vHCUs that are not the claim's");
  for (const std::string& v : named) {
    BOOST_TEST(theirs.count(v) == 0u, "vHCU " << v << " of claim uid-x handed to claim uid-h");
  }
  BOOST_REQUIRE(b.preparer->Unprepare(ref).ok());
  BOOST_REQUIRE(b.preparer->Unprepare(other).ok());
  BOOST_TEST(node.Inventory().vhcus.empty());
  BOOST_TEST(node.Files("/etc/vdev/dynamic").empty());
  BOOST_TEST(node.Files("/var/lib/hcu-device-plugin/dra").empty());
}

// The same, with a daemon restart in between: the driver gave the destroyed
// vHCU's index to a vHCU of the same size on the same card, so the node
// still looks as the claim's entry records it. Recovery must not keep the
// claim prepared on that entry.
BOOST_AUTO_TEST_CASE(restart_after_a_half_failed_unprepare_rolls_the_claim_back) {
  SimDraNode node("k100ai-8.yaml");
  BusyNode b(node);
  BOOST_REQUIRE(b.preparer->Recover().ok());
  const std::string size = R"({"cores":"30","memory":"8Gi"})";
  auto ref = node.AllocateAndStore(
      ClaimJson("uid-k", "k", "[" + ExactRequest("a", size) + "," + ExactRequest("b", size) + "]"),
      "pod-k");
  auto first = b.preparer->Prepare(ref);
  BOOST_REQUIRE(first.ok() && first->error.empty() && first->devices.size() == 2u);
  b.busy.pass = 1;
  b.busy.busy = 1;
  BOOST_REQUIRE(b.preparer->Unprepare(ref).code() == StatusCode::kUnavailable);
  auto other = node.AllocateAndStore(ClaimJson("uid-y", "y", "[" + ExactRequest("hcu", size) + "]"),
                                     "pod-y");
  auto oy = b.preparer->Prepare(other);
  BOOST_REQUIRE(oy.ok() && oy->error.empty());
  b.preparer.reset();

  node.Restart();
  auto recovered = node.preparer->Recover();
  BOOST_REQUIRE(recovered.ok());
  BOOST_TEST(recovered->kept == 1);  // uid-y only
  BOOST_TEST(MarkedVhcus(node, "pod-k").empty(), "the half-released claim was kept");
  auto again = node.preparer->Prepare(ref);
  BOOST_REQUIRE(again.ok());
  BOOST_REQUIRE_MESSAGE(again->error.empty(), again->error);
  const std::set<std::string> named = NamedVhcus(*again);
  BOOST_TEST(named == MarkedVhcus(node, "pod-k"), "CDI IDs name vHCUs that are not the claim's");
  const std::set<std::string> theirs = MarkedVhcus(node, "pod-y");
  for (const std::string& v : named) {
    BOOST_TEST(theirs.count(v) == 0u, "vHCU " << v << " of claim uid-y handed to claim uid-k");
  }
  BOOST_REQUIRE(node.preparer->Unprepare(ref).ok());
  BOOST_REQUIRE(node.preparer->Unprepare(other).ok());
  BOOST_TEST(node.Inventory().vhcus.empty());
  BOOST_TEST(node.Files("/var/lib/hcu-device-plugin/dra").empty());
}

// Card order that is not PCI order: devices are found by BDF, marks name the
// card's index.
BOOST_AUTO_TEST_CASE(card_order_not_pci_order_resolves_by_bdf) {
  SimDraNode node("k100ai-8-probe-order.yaml");
  BOOST_REQUIRE(node.preparer->Recover().ok());
  NodeInventory inv = node.Inventory();
  const Card* target = nullptr;
  for (const Card& c : inv.cards) {
    if (c.index == 5) target = &c;
  }
  BOOST_REQUIRE(target != nullptr);
  const std::string claim =
      "{\"metadata\":{\"namespace\":\"ns1\",\"name\":\"o\",\"uid\":\"uid-o\"},\"status\":{"
      "\"allocation\":{\"devices\":{\"results\":[{\"request\":\"hcu\",\"driver\":\"dra.hygon.com\","
      "\"pool\":\"node-a\",\"device\":\"" +
      dra::CardDeviceName(*target) +
      "\",\"consumedCapacity\":{\"cores\":\"10\",\"memory\":\"1Gi\"}}]}},"
      "\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"p\",\"uid\":\"pod-o\"}]}}";
  node.claims.Put(claim);
  auto a = node.preparer->Prepare({"ns1", "o", "uid-o"});
  BOOST_REQUIRE(a.ok() && a->error.empty());
  NodeInventory after = node.Inventory();
  BOOST_REQUIRE(after.vhcus.size() == inv.vhcus.size() + 1);  // next to the pre-split ones
  const Vhcu* made = nullptr;
  for (const Vhcu& v : after.vhcus) {
    if (inv.LookupVhcu(v.id).certainty() == Certainty::kAbsent) made = &v;
  }
  BOOST_REQUIRE(made != nullptr);
  BOOST_TEST(made->card_bdf == target->bdf);
  BOOST_TEST(made->card == 5);
  BOOST_TEST(made->compute_units == 10);
  auto marks = node.Files("/etc/vdev/dynamic");
  BOOST_REQUIRE(marks.size() == 1u);
  BOOST_TEST(marks[0] == "pod-o_hcu_5_" + std::to_string(made->id));
  BOOST_REQUIRE(node.preparer->Unprepare({"ns1", "o", "uid-o"}).ok());
  BOOST_TEST(node.Inventory().vhcus.size() == inv.vhcus.size());
}

// Many claims prepared and unprepared from several threads at once, the
// same claim twice concurrently: every call ends, nothing is left.
BOOST_AUTO_TEST_CASE(concurrent_calls_leave_nothing) {
  SimDraNode node("k100ai-8.yaml");
  BOOST_REQUIRE(node.preparer->Recover().ok());
  std::vector<dra::ClaimRef> refs;
  for (int i = 0; i < 6; ++i) {
    refs.push_back(node.AllocateAndStore(
        ClaimJson("uid-t" + std::to_string(i), "t" + std::to_string(i),
                  "[" + ExactRequest("hcu", R"({"cores":"10","memory":"2Gi"})") + "]"),
        "pod-t" + std::to_string(i)));
  }
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = static_cast<size_t>(t % 2); i < refs.size(); i += 1) {
        auto a = node.preparer->Prepare(refs[i]);
        if (!a.ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  BOOST_TEST(failures.load() == 0);
  // Every claim ends prepared exactly once (in-progress answers are retries).
  for (const auto& ref : refs) {
    auto a = node.preparer->Prepare(ref);
    BOOST_REQUIRE(a.ok());
    BOOST_TEST(a->error.empty(), a->error);
  }
  BOOST_TEST(node.Inventory().vhcus.size() == refs.size());
  threads.clear();
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&] {
      for (const auto& ref : refs) (void)node.preparer->Unprepare(ref);
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& ref : refs) BOOST_REQUIRE(node.preparer->Unprepare(ref).ok());
  BOOST_TEST(node.Inventory().vhcus.empty());
  BOOST_TEST(node.Files("/etc/vdev/dynamic").empty());
  BOOST_TEST(node.Files("/var/lib/hcu-device-plugin/dra").empty());
}

}  // namespace
}  // namespace hcudp::testing

namespace hcudp::testing {
namespace {

// An allocated claim whose one result names `device` of pool node-a.
std::string ReallocatedClaim(const std::string& uid, const std::string& device,
                             const std::string& share_id) {
  return "{\"metadata\":{\"namespace\":\"ns1\",\"name\":\"re\",\"uid\":\"" + uid +
         "\"},\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"hcu\","
         "\"driver\":\"dra.hygon.com\",\"pool\":\"node-a\",\"device\":\"" +
         device + "\",\"shareID\":\"" + share_id +
         "\"}]}},\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"p\",\"uid\":\"pod-re\"}]}}";
}

// The claim (same UID) was deallocated and allocated again to another card
// while this node still records its first preparation (an Unprepare that
// never came: a kubelet restart in between). Prepare must not answer the
// recorded card, which the scheduler may have given to another claim.
BOOST_AUTO_TEST_CASE(
    prepare_of_a_claim_reallocated_under_the_same_uid_never_answers_the_old_devices) {
  SimDraNode node("k100ai-8.yaml");
  BOOST_REQUIRE(node.preparer->Recover().ok());
  const NodeInventory inv = node.Inventory();
  const std::string first_card = dra::CardDeviceName(inv.cards[0]);
  const std::string other_card = dra::CardDeviceName(inv.cards[1]);
  const dra::ClaimRef ref{"ns1", "re", "uid-re"};
  node.claims.Put(ReallocatedClaim("uid-re", first_card, "share-1"));
  auto first = node.preparer->Prepare(ref);
  BOOST_REQUIRE(first.ok() && first->error.empty() && first->devices.size() == 1u);

  node.claims.Put(ReallocatedClaim("uid-re", other_card, "share-2"));
  for (bool restarted : {false, true}) {
    if (restarted) {
      node.Restart();
      BOOST_REQUIRE(node.preparer->Recover().ok());
    }
    auto again = node.preparer->Prepare(ref);
    BOOST_REQUIRE(again.ok());
    for (const auto& d : again->devices) {
      BOOST_TEST(d.device_name != first_card, "restarted=" << restarted << ": answered "
                                                           << d.device_name
                                                           << " of the old allocation");
    }
    BOOST_TEST(again->error.find(first_card) != std::string::npos,
               "restarted=" << restarted << ": error \"" << again->error << "\"");
  }
}

}  // namespace
}  // namespace hcudp::testing
