#include "hcudp/cdi.h"

#include <boost/test/unit_test.hpp>
#include <cctype>
#include <cstdlib>

#include "allocation/test_inventory.h"
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
  BOOST_TEST(spec.json.find("\"cdiVersion\": \"0.6.0\"") != std::string::npos);
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

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
