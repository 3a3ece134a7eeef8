// hcuctl dra slices, the real binary on the shipped demo nodes: what it
// prints is what the daemon would publish, and the API server (the fake,
// with the real limits and grammar) accepts every slice of it.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "fake_apiserver/fake_apiserver_process.h"
#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

RunResult Dra(const TempDir& root, const std::string& node, std::vector<std::string> args) {
  std::vector<std::string> argv = {BinaryPath("hcuctl/hcuctl"), "--backend=sim",
                                   "--sim-node=" + SourcePath("demo/nodes/" + node + ".yaml"),
                                   "--host-root=" + root.Join("root"), "dra"};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv);
}

std::string Serialize(const rapidjson::Value& v) {
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  v.Accept(w);
  return b.GetString();
}

BOOST_AUTO_TEST_SUITE(hcuctl_dra)

BOOST_AUTO_TEST_CASE(slices_json_of_every_demo_node_is_accepted_by_the_api_server) {
  FakeApiServer api;
  for (const std::string node : {"k100ai-8", "k100ai-8-probe-order", "bw-mig", "z100l-mixed"}) {
    BOOST_TEST_CONTEXT(node) {
      TempDir root;
      RunResult r = Dra(root, node, {"slices", "--node-name", "n-" + node, "-o", "json"});
      BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
      rapidjson::Document d;
      d.Parse(r.out.c_str());
      BOOST_REQUIRE(d.IsObject());
      BOOST_TEST(std::string(d["kind"].GetString()) == "ResourceSliceList");
      BOOST_REQUIRE(d["items"].Size() >= 1u);
      for (const auto& item : d["items"].GetArray()) {
        BOOST_TEST(std::string(item["spec"]["nodeName"].GetString()) == "n-" + node);
        FakeResponse resp =
            api.Request("POST", "/apis/resource.k8s.io/v1/resourceslices", Serialize(item));
        BOOST_TEST(resp.status == 201, resp.body);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(slices_table_names_devices_and_what_is_left_out) {
  TempDir root;
  RunResult r = Dra(root, "k100ai-8-probe-order", {"slices", "--node-name", "node-a"});
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  BOOST_TEST(r.out.find("9 device(s) in 1 slice(s)") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("hcu-0000-e9-00-0-vdev0") != std::string::npos);
  BOOST_TEST(r.out.find("not offered: card 2 (0000:e9:00.0)") != std::string::npos);

  RunResult yaml = Dra(root, "k100ai-8", {"slices", "--node-name", "node-a", "-o", "yaml"});
  BOOST_REQUIRE(yaml.exit_code == 0);
  BOOST_TEST(yaml.out.find("kind: ResourceSliceList") != std::string::npos);
  BOOST_TEST(yaml.out.find("resource.kubernetes.io/pciBusID") != std::string::npos);
}

// An unhealthy card: tainted by default, left out with --no-taints (the pool
// as published where the API server drops taints).
BOOST_AUTO_TEST_CASE(unhealthy_card_is_tainted_or_left_out_with_no_taints) {
  TempDir root;
  std::string node = ReadFile(SourcePath("demo/nodes/k100ai-8.yaml"));
  const size_t at = node.find("health: Healthy");
  BOOST_REQUIRE(at != std::string::npos);
  node.replace(at, 15, "health: Unhealthy");
  const std::string file = root.Join("sick.yaml");
  WriteFile(file, node);
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = {BinaryPath("hcuctl/hcuctl"),
                                     "--backend=sim",
                                     "--sim-node=" + file,
                                     "--host-root=" + root.Join("root"),
                                     "dra",
                                     "slices",
                                     "--node-name",
                                     "n1"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return Run(argv);
  };
  RunResult tainted = run({});
  BOOST_REQUIRE_MESSAGE(tainted.exit_code == 0, tainted.err);
  BOOST_TEST(tainted.out.find("8 device(s)") != std::string::npos, tainted.out);
  BOOST_TEST(tainted.out.find("dra.hygon.com/unhealthy:NoSchedule") != std::string::npos);
  RunResult left_out = run({"--no-taints"});
  BOOST_REQUIRE(left_out.exit_code == 0);
  BOOST_TEST(left_out.out.find("7 device(s)") != std::string::npos, left_out.out);
  BOOST_TEST(left_out.out.find("unhealthy:NoSchedule") == std::string::npos);
  BOOST_TEST(left_out.out.find("drops device taints") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(bad_input_exits_2_naming_it) {
  TempDir root;
  RunResult bad = Dra(root, "k100ai-8", {"slices", "--node-name", "Bad_Name"});
  BOOST_TEST(bad.exit_code == 2);
  BOOST_TEST(bad.err.find("Bad_Name") != std::string::npos);
  RunResult unknown = Dra(root, "k100ai-8", {"nope"});
  BOOST_TEST(unknown.exit_code == 2);
  BOOST_TEST(unknown.err.find("unknown action") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
