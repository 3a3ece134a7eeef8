// CdiMinimumVersion (cdi/cdi_edits.h): the CDI library's minimum-version
// rule, field by field, and the version every spec we write carries. A
// runtime refuses a cdiVersion it does not know (podman 4.3 and containerd
// 1.7.0-1.7.12 refuse 0.6.0), so a spec must not claim more than it uses.
#include <rapidjson/document.h>

#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "allocation/test_inventory.h"
#include "cdi/cdi_edits.h"
#include "hcudp/cdi.h"

namespace hcudp {
namespace {

std::string MinimumOf(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  BOOST_REQUIRE_MESSAGE(!doc.HasParseError(), json);
  return CdiMinimumVersion(doc);
}

struct VersionCase {
  const char* feature;
  const char* spec;
  const char* version;
};

// One row per feature of the library's rule, at the spec level and in a
// device's edits where the rule looks at both.
const std::vector<VersionCase> kVersionTable = {
    {"nothing beyond 0.3.0", R"({"kind":"a.com/b","devices":[{"name":"x","containerEdits":
       {"env":["A=1"],"deviceNodes":[{"path":"/dev/x"}],"mounts":[{"hostPath":"/a",
       "containerPath":"/a"}],"hooks":[{"hookName":"createContainer","path":"/h"}]}}]})",
     "0.3.0"},
    {"a mount's type (device)", R"({"kind":"a.com/b","devices":[{"name":"x","containerEdits":
       {"mounts":[{"hostPath":"/a","containerPath":"/a","type":"bind"}]}}]})",
     "0.4.0"},
    {"a mount's type (spec)", R"({"kind":"a.com/b","containerEdits":{"mounts":[{"hostPath":"/a",
       "containerPath":"/a","type":"bind"}]},"devices":[{"name":"x"}]})",
     "0.4.0"},
    {"an empty mount type is no type", R"({"kind":"a.com/b","devices":[{"name":"x",
       "containerEdits":{"mounts":[{"hostPath":"/a","containerPath":"/a","type":""}]}}]})",
     "0.3.0"},
    {"a device node's hostPath (device)", R"({"kind":"a.com/b","devices":[{"name":"x",
       "containerEdits":{"deviceNodes":[{"path":"/dev/x","hostPath":"/dev/y"}]}}]})",
     "0.5.0"},
    {"a device node's hostPath (spec)", R"({"kind":"a.com/b","containerEdits":{"deviceNodes":
       [{"path":"/dev/kfd","hostPath":"/dev/kfd"}]},"devices":[{"name":"x"}]})",
     "0.5.0"},
    {"a device name starting with a digit", R"({"kind":"a.com/b","devices":[{"name":"0000:09:00.0"}]})",
     "0.5.0"},
    {"a device name starting with a letter", R"({"kind":"a.com/b","devices":[{"name":"vdev3"}]})",
     "0.3.0"},
    {"spec annotations", R"({"kind":"a.com/b","annotations":{"k":"v"},"devices":[{"name":"x"}]})",
     "0.6.0"},
    {"device annotations", R"({"kind":"a.com/b","devices":[{"name":"x","annotations":{"k":"v"}}]})",
     "0.6.0"},
    {"empty annotations", R"({"kind":"a.com/b","annotations":{},"devices":[{"name":"x"}]})",
     "0.3.0"},
    {"a dot in the kind's class", R"({"kind":"a.com/b.c","devices":[{"name":"x"}]})", "0.6.0"},
    {"dots in the kind's vendor only", R"({"kind":"hygon.com/hcu","devices":[{"name":"x"}]})",
     "0.3.0"},
    {"intelRdt (device)", R"({"kind":"a.com/b","devices":[{"name":"x","containerEdits":
       {"intelRdt":{"closID":"c"}}}]})",
     "0.7.0"},
    {"intelRdt null is none", R"({"kind":"a.com/b","devices":[{"name":"x","containerEdits":
       {"intelRdt":null}}]})",
     "0.3.0"},
    {"additionalGids (spec)", R"({"kind":"a.com/b","containerEdits":{"additionalGids":[44]},
       "devices":[{"name":"x"}]})",
     "0.7.0"},
    {"additionalGids (device)", R"({"kind":"a.com/b","devices":[{"name":"x","containerEdits":
       {"additionalGids":[44]}}]})",
     "0.7.0"},
    {"netDevices", R"({"kind":"a.com/b","devices":[{"name":"x","containerEdits":
       {"netDevices":[{"hostInterfaceName":"eth1","name":"eth0"}]}}]})",
     "1.1.0"},
    {"intelRdt schemata", R"({"kind":"a.com/b","containerEdits":{"intelRdt":{"schemata":[]}},
       "devices":[{"name":"x"}]})",
     "1.1.0"},
    {"intelRdt enableMonitoring", R"({"kind":"a.com/b","devices":[{"name":"x","containerEdits":
       {"intelRdt":{"enableMonitoring":true}}}]})",
     "1.1.0"},
    {"the newest feature wins", R"({"kind":"a.com/b.c","annotations":{"k":"v"},"devices":
       [{"name":"0","containerEdits":{"additionalGids":[1],"deviceNodes":[{"path":"/d",
       "hostPath":"/d"}]}}]})",
     "0.7.0"},
};

BOOST_AUTO_TEST_SUITE(cdi_version)

BOOST_AUTO_TEST_CASE(each_feature_raises_the_minimum_as_the_cdi_library_does) {
  for (const VersionCase& c : kVersionTable) {
    BOOST_TEST(MinimumOf(c.spec) == c.version, c.feature);
  }
}

BOOST_AUTO_TEST_CASE(the_version_goes_first_and_replaces_one_already_there) {
  const std::string spec =
      WithMinimumCdiVersion(R"({"cdiVersion":"9.9.9","kind":"a.com/b","devices":[{"name":"x"}]})");
  BOOST_TEST(spec.rfind("{\n  \"cdiVersion\": \"0.3.0\",\n  \"kind\": \"a.com/b\"", 0) == 0, spec);
  BOOST_TEST(spec.find("9.9.9") == std::string::npos);
  BOOST_TEST(spec.back() == '\n');
  BOOST_TEST(WithMinimumCdiVersion("[1]").empty());
}

// Debian 12's podman 4.3.1 refused the device-plugin spec at 0.6.0 with
// "unresolvable CDI devices"; nothing in it needs more than 0.5.0 (the device
// nodes' hostPath, names like 0000:09:00.0).
BOOST_AUTO_TEST_CASE(the_device_plugin_spec_carries_the_lowest_version_it_needs) {
  NodeInventory inv = testing::MakeInventory(2);
  AllocationBuilder builder({"/", "/opt/hyhal"});
  CdiSpec spec = BuildCdiSpec(inv, {testing::CardResource(inv)}, builder);
  rapidjson::Document doc;
  doc.Parse(spec.json.c_str());
  BOOST_REQUIRE(!doc.HasParseError());
  BOOST_TEST(std::string(doc["cdiVersion"].GetString()) == "0.5.0");
  BOOST_TEST(CdiMinimumVersion(doc) == "0.5.0");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
