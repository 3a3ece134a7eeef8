// hcuctl dra prepared (the sub-command, called in process: the `hcuctl dra`
// dispatcher lives in cmd_dra.cc) over a checkpoint a Preparer wrote.
#include <boost/test/unit_test.hpp>
#include <sstream>

#include "command.h"
#include "dra_prepare/prepare_fixture.h"
#include "hcudp/dra/checkpoint.h"
#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

struct Output {
  int code;
  std::string out, err;
};

Output RunPrepared(const std::string& root, const std::vector<std::string>& args) {
  Options o;
  o.host_root = root;
  std::ostringstream out, err;
  hcuctl::Context ctx(o, hcuctl::OutputFormat::kTable, out, err);
  int code = hcuctl::kDraPreparedCommand.run(ctx, args);
  return {code, out.str(), err.str()};
}

BOOST_AUTO_TEST_CASE(lists_claims_devices_vhcus_and_cdi_ids_as_table_and_json) {
  TempDir root;
  dra::CheckpointStore store(root.path());
  const dra::PreparedClaim c = SamplePreparedClaim();
  BOOST_REQUIRE(store.Write(c).ok());

  Output table = RunPrepared(root.path(), {});
  BOOST_TEST(table.code == 0, table.err);
  for (const char* want : {"ns1", "small", "9a1e-01", "prepared", "dynamic-vhcu", "vdev4",
                           "dra.hygon.com/vhcu=9a1e-01-vdev4", "0000:09:00.0"}) {
    BOOST_TEST(table.out.find(want) != std::string::npos, want << " in\n" << table.out);
  }
  Output json = RunPrepared(root.path(), {"-o", "json"});
  BOOST_TEST(json.code == 0);
  BOOST_TEST(json.out.find("\"computeUnits\": 30") != std::string::npos, json.out);
  BOOST_TEST(json.out.find("\"memoryMiB\": 8192") != std::string::npos);
  Output yaml = RunPrepared(root.path(), {"-o", "yaml"});
  BOOST_TEST(yaml.out.find("uid: \"9a1e-01\"") != std::string::npos, yaml.out);

  // A corrupt entry is named and makes the exit code 1; the good one still shows.
  WriteFile(store.dir() + "/bad-1.json", "{");
  Output bad = RunPrepared(root.path(), {});
  BOOST_TEST(bad.code == 1);
  BOOST_TEST(bad.out.find("bad-1.json") != std::string::npos, bad.out);
  BOOST_TEST(bad.out.find("9a1e-01") != std::string::npos);
  BOOST_TEST(RunPrepared(root.path(), {"extra"}).code == 2);
}

BOOST_AUTO_TEST_CASE(an_empty_node_says_so) {
  TempDir root;
  Output out = RunPrepared(root.path(), {});
  BOOST_TEST(out.code == 0);
  BOOST_TEST(out.out.find("no prepared claims") != std::string::npos, out.out);
}

// An admin's `hcuctl vhcu destroy` of a pre-split vHCU that DRA mode has
// prepared for a claim (no mark file: pre-split vHCUs are the admin's) is
// refused naming the claim, as it is for a vHCU a pod holds; the container
// using it would otherwise lose its device under it.
BOOST_AUTO_TEST_CASE(vhcu_destroy_refuses_a_pre_split_vhcu_prepared_for_a_claim) {
  SimDraNode node("z100l-mixed.yaml");
  BOOST_REQUIRE(node.preparer->Recover().ok());
  const NodeInventory before = node.Inventory();
  BOOST_REQUIRE(!before.vhcus.empty());
  const Vhcu& vhcu = before.vhcus[0];
  node.claims.Put(
      "{\"metadata\":{\"namespace\":\"ns1\",\"name\":\"held\",\"uid\":\"uid-held\"},"
      "\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"v\","
      "\"driver\":\"dra.hygon.com\",\"pool\":\"node-a\",\"device\":\"" +
      dra::VhcuDeviceName(vhcu) +
      "\"}]}},\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"p\",\"uid\":\"pod-h\"}]}}");
  auto answer = node.preparer->Prepare({"ns1", "held", "uid-held"});
  BOOST_REQUIRE_MESSAGE(answer.ok(), answer.status().ToString());
  BOOST_REQUIRE_MESSAGE(answer->error.empty(), answer->error);

  Options o;
  o.host_root = node.Root();
  o.backend = BackendKind::kSim;
  o.sim_node_path = SourcePath("demo/nodes/z100l-mixed.yaml");
  o.pod_resources_socket = node.Root() + "/no-kubelet.sock";
  std::ostringstream out, err;
  hcuctl::Context ctx(o, hcuctl::OutputFormat::kTable, out, err);
  const int code = hcuctl::kVhcuCommand.run(ctx, {"destroy", "vdev" + std::to_string(vhcu.id)});
  BOOST_TEST(code != 0, "destroyed: " << out.str() << err.str());
  BOOST_TEST(err.str().find("ns1/held") != std::string::npos, err.str());
  BOOST_TEST((node.Inventory().LookupVhcu(vhcu.id).certainty() == Certainty::kFound));
}

}  // namespace
}  // namespace hcudp::testing
