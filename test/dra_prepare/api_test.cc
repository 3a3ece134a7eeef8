// The claim GET through the real KubeClient against the fake API server
// (test/fake_apiserver). It does not serve resource.k8s.io yet, so these
// tests use what it does for any path: faults (503, a hang) and its 404 for
// a resource it does not serve. Claims themselves come from FakeClaims in
// the other tests.
#include <boost/test/unit_test.hpp>
#include <chrono>

#include "dra_prepare/prepare_fixture.h"
#include "fake_apiserver/fake_apiserver_process.h"

namespace hcudp::testing {
namespace {

std::unique_ptr<KubeClient> Client(const FakeApiServer& api) {
  KubeConfig config;
  config.source = "test";
  config.server = api.server_url();
  config.ca_pem = ReadFile(api.ca_file());
  config.token_file = api.token_file();
  KubeClientOptions co;
  co.initial_backoff_ms = 10;
  co.max_backoff_ms = 50;
  co.max_retries = 2;
  auto client = KubeClient::New(config, co);
  BOOST_REQUIRE(client.ok());
  return std::move(*client);
}

BOOST_AUTO_TEST_CASE(slow_or_failing_api_is_a_bounded_per_claim_error) {
  FakeApiServer api;
  auto client = Client(api);
  SimDraNode node("k100ai-8.yaml");
  node.UseFetcher(dra::KubeClaimFetcher(client.get(), std::chrono::milliseconds(500)));
  BOOST_REQUIRE(node.preparer->Recover().ok());
  const dra::ClaimRef ref{"ns1", "c1", "uid-1"};

  api.AddFault(R"({"method":"GET","path":"resourceclaims","status":503,"count":-1})");
  auto unavailable = node.preparer->Prepare(ref);
  BOOST_REQUIRE(unavailable.ok());
  BOOST_TEST(unavailable->error.find("503") != std::string::npos, unavailable->error);
  BOOST_TEST(CountRequests(api.Requests(), "GET",
                           "/apis/resource.k8s.io/v1/namespaces/ns1/resourceclaims/c1") == 3);
  api.ClearFaults();

  api.NeverAnswer("GET", "resourceclaims");
  const auto t0 = std::chrono::steady_clock::now();
  auto slow = node.preparer->Prepare(ref);
  const double took_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  api.ClearFaults();
  BOOST_REQUIRE(slow.ok());
  BOOST_TEST(!slow->error.empty());
  BOOST_TEST(took_s < 5.0);  // bounded by the fetcher's 500 ms
  BOOST_TEST(node.Files("/var/lib/hcu-device-plugin/dra").empty());
}

BOOST_AUTO_TEST_CASE(a_404_that_does_not_name_the_claim_never_unprepares_it) {
  // An API server that does not serve resource.k8s.io/v1 (the group disabled)
  // answers every claim GET with kube-apiserver's plain 404 page, which names
  // no claim. The fake serves the group, so the test makes it answer so.
  FakeApiServer api;
  auto client = Client(api);
  SimDraNode node("k100ai-8.yaml");
  BOOST_REQUIRE(node.preparer->Recover().ok());
  auto ref = node.AllocateAndStore(
      ClaimJson("uid-2", "c2", "[" + ExactRequest("hcu", R"({"cores":"30","memory":"8Gi"})") + "]"),
      "pod-2");
  auto a = node.preparer->Prepare(ref);
  BOOST_REQUIRE(a.ok() && a->error.empty());
  node.UseFetcher(dra::KubeClaimFetcher(client.get(), std::chrono::seconds(2)));
  api.AddFault(R"({"method":"GET","path":"resourceclaims","status":404,"count":-1,)"
               R"("body":"404 page not found\n"})");
  auto direct = client->Get(dra::ResourceClaimPath("ns1", "c2"));
  BOOST_REQUIRE(IsNotFound(direct.status()));  // what the test relies on
  auto r = node.preparer->Recover();
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->unprepared == 0);
  BOOST_TEST(r->pending == 1);
  BOOST_TEST(node.Inventory().vhcus.size() == 1u);
}

}  // namespace
}  // namespace hcudp::testing
