#include "hcudp/allocation.h"

#include <boost/test/unit_test.hpp>

#include "allocation/test_inventory.h"
#include "testing/testutil.h"

namespace hcudp {
namespace {

using testing::CardResource;
using testing::MakeInventory;
using testing::TempDir;
using testing::WriteFile;

struct Node {
  TempDir root;
  NodeInventory inv = MakeInventory(4);
  AllocationBuilder builder{{root.path(), "/opt/hyhal"}};

  // vdev<id> on `card`, with its conf written under the host root.
  Resource AddVhcus(std::vector<std::pair<int, int>> id_card, bool write_conf = true) {
    Resource r;
    r.name = "hygon.com/hcu-share-15c-8g";
    r.kind = DeviceKind::kVhcu;
    for (auto [id, card] : id_card) {
      Vhcu v;
      v.id = id;
      v.card = card;
      v.card_bdf = inv.cards[static_cast<size_t>(card)].bdf;
      v.conf_path = "/etc/vdev/vdev" + std::to_string(id) + ".conf";
      inv.vhcus.push_back(v);
      if (write_conf) WriteFile(root.Join(v.conf_path), "vdev_id: " + std::to_string(id) + "\n");
      ResourceDevice d;
      d.id = "vdev" + std::to_string(id);
      d.card = card;
      d.vhcu_id = id;
      r.devices.push_back(d);
    }
    return r;
  }

  Resource AddMig(int card, bool write_conf = true) {
    MigInstance m;
    m.card = card;
    m.gpu_instance = 1;
    m.compute_instance = 0;
    m.profile = "4g.31gb";
    m.uuid = "0fd630f1-f29d-4da9-953f-48f1a09f76b5";
    m.conf_path = "/etc/dmi_mig_config/ci/dev" + std::to_string(card) + "gi1ci0.conf";
    inv.mig_instances.push_back(m);
    if (write_conf) WriteFile(root.Join(m.conf_path), "pci: x\n");
    Resource r;
    r.name = "hygon.com/hcu-mig-4g-31gb";
    r.kind = DeviceKind::kMig;
    ResourceDevice d;
    d.id = m.device_id();
    d.card = card;
    d.mig_index = static_cast<int>(inv.mig_instances.size()) - 1;
    r.devices.push_back(d);
    return r;
  }
};

BOOST_AUTO_TEST_SUITE(allocation)

BOOST_FIXTURE_TEST_CASE(card_gets_kfd_mkfd_hyhal_and_its_dri_nodes, Node) {
  auto a = builder.Build(inv, CardResource(inv), {"0000:0a:00.0"});
  BOOST_REQUIRE(a.ok());
  std::vector<DeviceNode> want = {{"/dev/kfd", "/dev/kfd", "rw"},
                                  {"/dev/mkfd", "/dev/mkfd", "rw"},
                                  {"/dev/dri/card2", "/dev/dri/card2", "rw"},
                                  {"/dev/dri/renderD129", "/dev/dri/renderD129", "rw"}};
  BOOST_TEST((a->devices == want));
  BOOST_TEST((a->mounts == std::vector<Mount>{{"/opt/hyhal", "/opt/hyhal", true}}));
  BOOST_TEST((a->cdi_devices == std::vector<std::string>{"hygon.com/hcu=0000:0a:00.0"}));
  // Hygon's runtime would add every other card to a DTK image without it.
  BOOST_TEST((a->envs ==
              std::vector<std::pair<std::string, std::string>>{{"HCU_VISIBLE_DEVICES", "void"}}));
}

BOOST_FIXTURE_TEST_CASE(kfd_and_mkfd_only_when_present, Node) {
  inv.has_mkfd = false;
  auto a = builder.Build(inv, CardResource(inv), {"0000:09:00.0"});
  BOOST_REQUIRE(a.ok());
  BOOST_TEST(a->devices.size() == 3u);
  BOOST_TEST(a->devices[0].host_path == "/dev/kfd");
  BOOST_TEST(a->devices[1].host_path == "/dev/dri/card1");
  inv.has_kfd = false;
  BOOST_TEST(builder.Build(inv, CardResource(inv), {"0000:09:00.0"})->devices.size() == 2u);
}

BOOST_FIXTURE_TEST_CASE(hyhal_mount_uses_the_configured_host_path, Node) {
  AllocationBuilder b({root.path(), "/usr/local/hyhal"});
  auto a = b.Build(inv, CardResource(inv), {"0000:09:00.0"});
  BOOST_REQUIRE(a.ok());
  BOOST_TEST((a->mounts == std::vector<Mount>{{"/usr/local/hyhal", "/opt/hyhal", true}}));
}

BOOST_FIXTURE_TEST_CASE(several_cards_come_in_card_order_whatever_the_request_order, Node) {
  auto a = builder.Build(inv, CardResource(inv), {"0000:0c:00.0", "0000:09:00.0"});
  BOOST_REQUIRE(a.ok());
  BOOST_REQUIRE(a->devices.size() == 6u);
  BOOST_TEST(a->devices[2].host_path == "/dev/dri/card1");
  BOOST_TEST(a->devices[4].host_path == "/dev/dri/card4");
}

BOOST_FIXTURE_TEST_CASE(unknown_ids_are_invalid_argument_naming_all_of_them, Node) {
  auto a = builder.Build(inv, CardResource(inv), {"0000:09:00.0", "nope", "0000:ff:00.0"});
  BOOST_REQUIRE(!a.ok());
  BOOST_TEST((a.status().code() == StatusCode::kInvalidArgument));
  BOOST_TEST(a.status().message() == "unknown device IDs for hygon.com/hcu: 0000:ff:00.0, nope");
}

BOOST_FIXTURE_TEST_CASE(empty_id_is_an_unknown_id, Node) {
  auto a = builder.Build(inv, CardResource(inv), {""});
  BOOST_REQUIRE(!a.ok());
  BOOST_TEST((a.status().code() == StatusCode::kInvalidArgument));
  BOOST_TEST(a.status().message() == "unknown device IDs for hygon.com/hcu: \"\"");
}

BOOST_FIXTURE_TEST_CASE(empty_request_is_invalid_argument, Node) {
  auto a = builder.Build(inv, CardResource(inv), {});
  BOOST_TEST((a.status().code() == StatusCode::kInvalidArgument));
}

BOOST_FIXTURE_TEST_CASE(card_without_dri_nodes_is_failed_precondition_naming_bdf, Node) {
  inv.cards[1].dri_nodes.clear();
  inv.cards[1].dri_error = "no drm directory";
  auto a = builder.Build(inv, CardResource(inv), {"0000:0a:00.0"});
  BOOST_REQUIRE(!a.ok());
  BOOST_TEST((a.status().code() == StatusCode::kFailedPrecondition));
  BOOST_TEST(a.status().message() ==
             "card 0000:0a:00.0 has no DRI device nodes (no drm directory)");
}

BOOST_FIXTURE_TEST_CASE(vhcu_gets_parent_dri_and_its_conf_at_the_docker_path, Node) {
  Resource r = AddVhcus({{3, 2}});
  auto a = builder.Build(inv, r, {"vdev3"});
  BOOST_REQUIRE(a.ok());
  BOOST_REQUIRE(a->devices.size() == 4u);
  BOOST_TEST(a->devices[2].host_path == "/dev/dri/card3");
  std::vector<Mount> want = {{"/opt/hyhal", "/opt/hyhal", true},
                             {"/etc/vdev/vdev3.conf", "/etc/vdev/docker/vdev3.conf", true}};
  BOOST_TEST((a->mounts == want));
  BOOST_TEST((a->cdi_devices == std::vector<std::string>{"hygon.com/hcu=vdev3"}));
}

BOOST_FIXTURE_TEST_CASE(two_vhcus_in_one_container_are_refused, Node) {
  Resource r = AddVhcus({{0, 2}, {1, 3}});
  auto a = builder.Build(inv, r, {"vdev0", "vdev1"});
  BOOST_REQUIRE(!a.ok());
  BOOST_TEST((a.status().code() == StatusCode::kInvalidArgument));
  BOOST_TEST(a.status().message().find("one vHCU per container") == 0u);
}

BOOST_FIXTURE_TEST_CASE(vhcu_conf_must_be_a_non_empty_text_file, Node) {
  struct Case {
    std::string name;
    std::string content;  // "<dir>" makes it a directory, "<none>" leaves it absent
    std::string message;
  };
  const std::vector<Case> cases = {
      {"missing", "<none>", "vHCU conf /etc/vdev/vdev0.conf does not exist"},
      {"directory", "<dir>", "vHCU conf /etc/vdev/vdev0.conf is not a regular file"},
      {"empty", "", "vHCU conf /etc/vdev/vdev0.conf is empty"},
      {"blank", " \n\t\n", "vHCU conf /etc/vdev/vdev0.conf has only blanks"},
      {"binary", std::string("vdev_id: 0\0x", 12),
       "vHCU conf /etc/vdev/vdev0.conf is not text (contains NUL)"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT("case " << c.name) {
      TempDir dir;
      const std::string path = dir.Join("etc/vdev/vdev0.conf");
      if (c.content == "<dir>") {
        WriteFile(path + "/x", "x");
      } else if (c.content != "<none>") {
        WriteFile(path, c.content);
      }
      Status st = ValidateVhcuConfFile(dir.path(), "/etc/vdev/vdev0.conf");
      BOOST_TEST((st.code() == StatusCode::kFailedPrecondition));
      BOOST_TEST(st.message() == c.message);
    }
  }
}

BOOST_FIXTURE_TEST_CASE(vhcu_with_bad_conf_fails_allocation, Node) {
  Resource r = AddVhcus({{0, 2}}, /*write_conf=*/false);
  auto a = builder.Build(inv, r, {"vdev0"});
  BOOST_TEST((a.status().code() == StatusCode::kFailedPrecondition));
}

BOOST_FIXTURE_TEST_CASE(mig_gets_parent_dri_and_its_ci_conf_at_the_same_path, Node) {
  Resource r = AddMig(3);
  auto a = builder.Build(inv, r, {"MIG-0fd630f1-f29d-4da9-953f-48f1a09f76b5"});
  BOOST_REQUIRE(a.ok());
  BOOST_TEST(a->devices[2].host_path == "/dev/dri/card4");
  std::vector<Mount> want = {
      {"/opt/hyhal", "/opt/hyhal", true},
      {"/etc/dmi_mig_config/ci/dev3gi1ci0.conf", "/etc/dmi_mig_config/ci/dev3gi1ci0.conf", true}};
  BOOST_TEST((a->mounts == want));
}

BOOST_FIXTURE_TEST_CASE(mig_conf_that_is_missing_fails_allocation, Node) {
  Resource r = AddMig(3, /*write_conf=*/false);
  auto a = builder.Build(inv, r, {r.devices[0].id});
  BOOST_REQUIRE(!a.ok());
  BOOST_TEST((a.status().code() == StatusCode::kFailedPrecondition));
  BOOST_TEST(a.status().message().find("/etc/dmi_mig_config/ci/dev3gi1ci0.conf") !=
             std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(two_mig_instances_in_one_container_are_refused, Node) {
  Resource r = AddMig(2);
  Resource r2 = AddMig(3);
  r2.devices[0].id = "MIG-other";
  r.devices.push_back(r2.devices[0]);
  auto a = builder.Build(inv, r, {r.devices[0].id, "MIG-other"});
  BOOST_REQUIRE(!a.ok());
  BOOST_TEST(a.status().message().find("one MIG instance per container") == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
