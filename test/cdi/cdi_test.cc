#include "hcudp/cdi.h"

#include <rapidjson/document.h>
#include <sys/stat.h>

#include <boost/test/unit_test.hpp>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "allocation/test_inventory.h"
#include "testing/hcu_toolkit_model.h"
#include "testing/testutil.h"

namespace hcudp {
namespace {

using testing::CardResource;
using testing::MakeInventory;
using testing::TempDir;

BOOST_AUTO_TEST_SUITE(cdi)

BOOST_AUTO_TEST_CASE(device_names_keep_the_cdi_charset_and_replace_the_rest) {
  const std::vector<std::pair<std::string, std::string>> table = {
      {"0000:09:00.0", "0000:09:00.0"},
      {"vdev3", "vdev3"},
      {"MIG-0fd630f1-f29d", "MIG-0fd630f1-f29d"},
      {"a/b c", "a_b_c"},
      {"-x", "x-x"},
      {"MIG-", "MIG-x"},
      {"", "x"}};
  for (const auto& [id, want] : table) {
    BOOST_TEST(CdiDeviceName(id) == want);
  }
}

// The CDI parser (ValidateDeviceName) wants [A-Za-z0-9] first and last and
// [A-Za-z0-9_.:-] between; one bad name makes runtimes refuse the whole spec.
BOOST_AUTO_TEST_CASE(device_names_start_and_end_with_a_letter_or_digit) {
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  for (const std::string id : {"", "_", "-", ":a", "a:", "a.", "_a_", "\xff", "/"}) {
    const std::string name = CdiDeviceName(id);
    BOOST_TEST_REQUIRE(!name.empty(), "id \"" << id << "\"");
    BOOST_TEST(alnum(name.front()), "id \"" << id << "\" gave \"" << name << "\"");
    BOOST_TEST(alnum(name.back()), "id \"" << id << "\" gave \"" << name << "\"");
  }
  BOOST_TEST(CdiQualifiedName("vdev1") == "hygon.com/hcu=vdev1");
}

BOOST_AUTO_TEST_CASE(spec_lists_each_device_once_with_common_edits_on_top) {
  NodeInventory inv = MakeInventory(2);
  AllocationBuilder builder({"/", "/opt/hyhal"});
  std::vector<Resource> resources = {CardResource(inv), CardResource(inv)};
  CdiSpec spec = BuildCdiSpec(inv, resources, builder);
  BOOST_TEST(spec.skipped.empty());
  BOOST_TEST(spec.json.find("\"kind\": \"hygon.com/hcu\"") != std::string::npos);
  BOOST_TEST(spec.json.find("\"cdiVersion\": \"0.5.0\"") != std::string::npos);
  size_t first = spec.json.find("\"name\": \"0000:09:00.0\"");
  BOOST_TEST(first != std::string::npos);
  BOOST_TEST(spec.json.find("\"name\": \"0000:09:00.0\"", first + 1) == std::string::npos);
  BOOST_TEST(spec.json.find("\"path\": \"/dev/kfd\"") < spec.json.find("\"devices\""));
}

BOOST_AUTO_TEST_CASE(device_without_dri_is_skipped_not_fatal) {
  NodeInventory inv = MakeInventory(2);
  inv.cards[0].dri_nodes.clear();
  AllocationBuilder builder({"/", "/opt/hyhal"});
  CdiSpec spec = BuildCdiSpec(inv, {CardResource(inv)}, builder);
  BOOST_REQUIRE(spec.skipped.size() == 1u);
  BOOST_TEST(spec.skipped[0].find("0000:09:00.0: ") == 0u);
  BOOST_TEST(spec.json.find("\"name\": \"0000:0a:00.0\"") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(written_spec_validates_against_the_cdi_schema) {
  TempDir dir;
  NodeInventory inv = MakeInventory(3);
  AllocationBuilder builder({"/", "/opt/hyhal"});
  CdiSpec spec = BuildCdiSpec(inv, {CardResource(inv)}, builder);
  BOOST_REQUIRE(WriteCdiSpec(dir.Join("cdi"), spec.json).ok());
  const std::string file = dir.Join("cdi/hygon.com-hcu.json");
  BOOST_TEST(testing::ReadFile(file) == spec.json);
  std::string cmd = "python3 " + testing::SourcePath("test/cdi/validate_cdi.py") + " " + file +
                    " >" + dir.Join("out.txt") + " 2>&1";
  int rc = std::system(cmd.c_str());
  BOOST_TEST(rc == 0, "jsonschema: " << testing::ReadFile(dir.Join("out.txt")));
}

BOOST_AUTO_TEST_CASE(the_validator_rejects_a_spec_without_devices) {
  TempDir dir;
  BOOST_REQUIRE(WriteCdiSpec(dir.path(), "{\"cdiVersion\":\"0.6.0\",\"kind\":\"a/b\"}").ok());
  std::string cmd = "python3 " + testing::SourcePath("test/cdi/validate_cdi.py") + " " +
                    dir.Join("hygon.com-hcu.json") + " >/dev/null 2>&1";
  BOOST_TEST(std::system(cmd.c_str()) != 0);
}

BOOST_AUTO_TEST_CASE(rewrite_replaces_the_file_and_leaves_no_temp_files) {
  TempDir dir;
  BOOST_REQUIRE(WriteCdiSpec(dir.path(), "{\"a\":1}\n").ok());
  BOOST_REQUIRE(WriteCdiSpec(dir.path(), "{\"a\":2}\n").ok());
  BOOST_TEST(testing::ReadFile(dir.Join("hygon.com-hcu.json")) == "{\"a\":2}\n");
  auto r = testing::Run({"/bin/ls", "-A", dir.path()});
  BOOST_TEST(r.out == "hygon.com-hcu.json\n");
}

// A host root with what a Hygon node may hold: the card's sysfs directory,
// /usr/local/hyhal, debugfs, and the hook the DaemonSet put on the host.
struct CdiNode {
  TempDir root;
  NodeInventory inv = MakeInventory(2);
  AllocationBuilderOptions options;
  const std::string sysfs = "/sys/devices/pci0000:00/0000:00:01.0/0000:09:00.0";
  const std::string hook = "/var/lib/hcu-device-plugin/bin/hcu-cdi-hook";
  CdiNode() {
    inv.cards[0].sysfs_dir = sysfs;
    inv.cards[0].pcie_root = "pci0000:00";
    testing::WriteFile(root.Join(sysfs + "/vendor"), "0x1d94\n");
    testing::WriteFile(root.Join("usr/local/hyhal/lib/libhydmi.so"), "");
    testing::WriteFile(root.Join("sys/kernel/debug/dri/1/name"), "");
    testing::WriteFile(root.Join(hook), "#!/bin/sh\n");
    ::chmod(root.Join(hook).c_str(), 0755);
    options.host_root = root.path();
    options.cdi_hook_path = hook;
  }
  rapidjson::Document Spec() const {
    CdiSpec spec = BuildCdiSpec(inv, {CardResource(inv)}, AllocationBuilder(options));
    rapidjson::Document d;
    d.Parse(spec.json.c_str());
    BOOST_REQUIRE(!d.HasParseError());
    return d;
  }
};

std::vector<std::string> Strings(const rapidjson::Value& list) {
  std::vector<std::string> out;
  for (const auto& v : list.GetArray()) out.push_back(v.GetString());
  return out;
}

const rapidjson::Value& DeviceEditsOf(const rapidjson::Document& spec, const std::string& name) {
  for (const auto& d : spec["devices"].GetArray()) {
    if (name == d["name"].GetString()) return d["containerEdits"];
  }
  BOOST_FAIL("no device " << name);
  return spec["containerEdits"];
}

// Hygon's runtime injects every card into a DTK image unless told "void":
// the spec's common edits tell it, whatever device is asked for.
BOOST_AUTO_TEST_CASE(the_spec_sets_hcu_visible_devices_void_for_every_device) {
  CdiNode n;
  auto spec = n.Spec();
  std::vector<std::pair<std::string, std::string>> env;
  for (const std::string& kv : Strings(spec["containerEdits"]["env"])) {
    env.emplace_back(kv.substr(0, kv.find('=')), kv.substr(kv.find('=') + 1));
  }
  BOOST_TEST(testing::HcuToolkitDecision(testing::DtkContainerEnv(env)) ==
             testing::ToolkitInjects::kNothing);
  BOOST_TEST(Strings(spec["containerEdits"]["env"]) ==
             std::vector<std::string>{"HCU_VISIBLE_DEVICES=void"});
}

// Parity with Hygon's driver where a workload may need it: the card's
// sysfs directory (rbind, ro), /usr/local/hyhal (ro), and the by-path links
// through our hook; a card without a known sysfs place gets no sysfs mount.
BOOST_AUTO_TEST_CASE(device_edits_carry_sysfs_by_path_hook_and_local_hyhal) {
  CdiNode n;
  auto spec = n.Spec();
  const auto& common = spec["containerEdits"];
  bool local_hyhal = false;
  for (const auto& m : common["mounts"].GetArray()) {
    if (std::string(m["hostPath"].GetString()) == "/usr/local/hyhal") {
      local_hyhal = true;
      BOOST_TEST(Strings(m["options"])[0] == "ro");
    }
  }
  BOOST_TEST(local_hyhal);
  const auto& card0 = DeviceEditsOf(spec, "0000:09:00.0");
  BOOST_REQUIRE(card0.HasMember("mounts"));
  BOOST_TEST(std::string(card0["mounts"][0]["hostPath"].GetString()) == n.sysfs);
  BOOST_TEST(std::string(card0["mounts"][0]["containerPath"].GetString()) == n.sysfs);
  BOOST_TEST(Strings(card0["mounts"][0]["options"]) ==
             (std::vector<std::string>{"ro", "nosuid", "nodev", "rbind"}));
  BOOST_REQUIRE(card0.HasMember("hooks"));
  const auto& hook = card0["hooks"][0];
  BOOST_TEST(std::string(hook["hookName"].GetString()) == "createContainer");
  BOOST_TEST(std::string(hook["path"].GetString()) == n.hook);
  BOOST_TEST(Strings(hook["args"]) ==
             (std::vector<std::string>{"hcu-cdi-hook", "create-symlinks", "--link",
                                       "../card1::/dev/dri/by-path/pci-0000:09:00.0-card", "--link",
                                       "../renderD128::/dev/dri/by-path/pci-0000:09:00.0-render"}));
  const auto& card1 = DeviceEditsOf(spec, "0000:0a:00.0");
  BOOST_TEST(!card1.HasMember("mounts"));
  BOOST_TEST(card1.HasMember("hooks"));
}

// A runtime fails a container whose hook or mount source is missing: what
// the host lacks stays out of the spec.
BOOST_AUTO_TEST_CASE(a_missing_hook_or_local_hyhal_is_left_out) {
  CdiNode n;
  std::filesystem::remove(n.root.Join(n.hook));
  std::filesystem::remove_all(n.root.Join("usr/local/hyhal"));
  auto spec = n.Spec();
  BOOST_TEST(!DeviceEditsOf(spec, "0000:09:00.0").HasMember("hooks"));
  for (const auto& m : spec["containerEdits"]["mounts"].GetArray()) {
    BOOST_TEST(std::string(m["hostPath"].GetString()) != "/usr/local/hyhal");
  }
}

// containerd and CRI-O create a missing hostPath: a host without hyhal got
// an empty /usr/local/hyhal, and every workload then had it mounted over its
// image's own copy. Only a vendor tree (hy-smi, or the DMI / SMI libraries)
// is mounted.
BOOST_AUTO_TEST_CASE(local_hyhal_is_mounted_only_when_it_is_a_vendor_tree) {
  auto mounts_local_hyhal = [](const CdiNode& n) {
    auto spec = n.Spec();
    for (const auto& m : spec["containerEdits"]["mounts"].GetArray()) {
      if (std::string(m["hostPath"].GetString()) == "/usr/local/hyhal") return true;
    }
    return false;
  };
  CdiNode n;
  std::filesystem::remove_all(n.root.Join("usr/local/hyhal"));
  std::filesystem::create_directories(n.root.Join("usr/local/hyhal/lib"));
  BOOST_TEST(!mounts_local_hyhal(n), "an empty tree, as a created hostPath");
  std::filesystem::create_directories(n.root.Join("usr/local/hyhal/bin/hy-smi"));
  BOOST_TEST(!mounts_local_hyhal(n), "a directory named hy-smi");
  std::filesystem::remove(n.root.Join("usr/local/hyhal/bin/hy-smi"));
  testing::WriteFile(n.root.Join("usr/local/hyhal/bin/hy-smi"), "");
  BOOST_TEST(mounts_local_hyhal(n), "bin/hy-smi");
  std::filesystem::remove(n.root.Join("usr/local/hyhal/bin/hy-smi"));
  testing::WriteFile(n.root.Join("usr/local/hyhal/lib/librocm_smi64.so"), "");
  BOOST_TEST(mounts_local_hyhal(n), "lib/librocm_smi64.so");
}

// /dev/mem and /sys/kernel/debug, which Hygon's driver gives every
// container, only with cdi_debug_access.
BOOST_AUTO_TEST_CASE(debugfs_and_dev_mem_only_on_request) {
  CdiNode n;
  auto has = [](const rapidjson::Value& edits, const char* list, const char* key,
                const std::string& path) {
    if (!edits.HasMember(list)) return false;
    for (const auto& e : edits[list].GetArray()) {
      if (path == e[key].GetString()) return true;
    }
    return false;
  };
  auto spec = n.Spec();
  BOOST_TEST(!has(spec["containerEdits"], "mounts", "hostPath", "/sys/kernel/debug"));
  BOOST_TEST(!has(spec["containerEdits"], "deviceNodes", "path", "/dev/mem"));
  n.options.cdi_debug_access = true;
  spec = n.Spec();
  BOOST_TEST(has(spec["containerEdits"], "mounts", "hostPath", "/sys/kernel/debug"));
}

BOOST_AUTO_TEST_CASE(a_spec_with_every_edit_validates_against_the_cdi_schema) {
  CdiNode n;
  n.options.cdi_debug_access = true;
  CdiSpec spec = BuildCdiSpec(n.inv, {CardResource(n.inv)}, AllocationBuilder(n.options));
  BOOST_REQUIRE(WriteCdiSpec(n.root.Join("cdi"), spec.json).ok());
  std::string cmd = "python3 " + testing::SourcePath("test/cdi/validate_cdi.py") + " " +
                    n.root.Join("cdi/hygon.com-hcu.json") + " >" + n.root.Join("out.txt") + " 2>&1";
  const int rc = std::system(cmd.c_str());  // before the message reads its output
  BOOST_TEST(rc == 0, testing::ReadFile(n.root.Join("out.txt")));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
