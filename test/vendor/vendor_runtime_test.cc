// DlopenVendorLib against what the shipped 6.2.x/6.3.x libraries really do
// (reference/hcu-hardware.md §1.9): DMI numbers cards in KFD topology order,
// status codes beyond 31, DMI initialising once per process, RESET_REQUIRED.
#include <dlfcn.h>

#include <boost/test/unit_test.hpp>
#include <map>

#include "hcudp/dlopen_vendor_lib.h"
#include "hcudp/vdev_conf.h"
#include "stub_node.h"

namespace hcudp {
namespace {

using testing::K100;
using testing::OpenAndInit;
using testing::SourcePath;
using testing::StubNode;

std::string ProbeOrder() { return SourcePath("demo/nodes/k100ai-8-probe-order.yaml"); }

// index -> BDF of the probe-order node (index order is not PCI order).
const std::map<int, std::string> kProbeBdf = {
    {0, "0000:69:00.0"}, {1, "0000:09:00.0"}, {2, "0000:e9:00.0"}, {3, "0000:29:00.0"},
    {4, "0000:c9:00.0"}, {5, "0000:49:00.0"}, {6, "0000:a9:00.0"}, {7, "0000:89:00.0"}};

BOOST_AUTO_TEST_SUITE(VendorRuntime)

BOOST_AUTO_TEST_CASE(DmiAnswersAreAboutTheCardWithThatBdf) {
  StubNode node(ProbeOrder());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  for (const auto& [card, bdf] : kProbeBdf) {
    StatusOr<std::string> got = lib->PciBdf(card);
    BOOST_REQUIRE(got.ok());
    BOOST_CHECK_EQUAL(*got, bdf);
  }
  // Card 2 (the highest address, probed third) carries both pre-split vHCUs.
  for (int card = 0; card < 8; ++card) {
    StatusOr<DmiRemaining> left = lib->Remaining(card);
    BOOST_REQUIRE_MESSAGE(left.ok(), left.status().ToString());
    BOOST_CHECK_MESSAGE(left->compute_units == (card == 2 ? 0 : 120),
                        "card " << card << ": " << left->compute_units << " CUs left");
  }
  StatusOr<DmiDeviceInfo> v0 = lib->VhcuInfo(0);
  BOOST_REQUIRE_MESSAGE(v0.ok(), v0.status().ToString());
  BOOST_CHECK_EQUAL(v0->parent_card, 2);
  BOOST_CHECK_EQUAL(v0->parent_bdf, "0000:e9:00.0");
}

BOOST_AUTO_TEST_CASE(CreateActsOnTheCardWithThatBdf) {
  StubNode node(ProbeOrder());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  for (int card : {0, 5, 7}) {
    BOOST_TEST_CONTEXT("card " << card) {
      const Status created = lib->CreateVhcu(card, 10, 1024);
      BOOST_REQUIRE_MESSAGE(created.ok(), created.ToString());
      // vdev0/1 are the pre-split ones; creates take the next free ids.
      const int id = card == 0 ? 2 : card == 5 ? 3 : 4;
      StatusOr<VdevConf> conf = ParseVdevConf(
          testing::ReadFile(node.host_root() + "/etc/vdev/vdev" + std::to_string(id) + ".conf"));
      BOOST_REQUIRE(conf.ok());
      BOOST_CHECK_EQUAL(conf->pci_bus_id, kProbeBdf.at(card));
    }
  }
}

BOOST_AUTO_TEST_CASE(HymgrUnreachableIsRetriedWithBoundedBackoff) {
  for (int code : {32, 33, 34}) {
    BOOST_TEST_CONTEXT("dmiStatus " << code) {
      StubNode node(K100());
      std::unique_ptr<VendorLib> lib = OpenAndInit(node);
      node.Control("dmi_fail_code=" + std::to_string(code) + "\ndmi_fail_count=2\n");
      StatusOr<DmiDeviceInfo> info = lib->DeviceInfo(1);
      BOOST_CHECK_MESSAGE(info.ok(), info.status().ToString());
      BOOST_CHECK((node.sleeps_ms() == std::vector<int>{200, 400}));
      // Still down after every retry: Unavailable, naming hymgr.
      node.Control("dmi_fail_code=" + std::to_string(code) + "\ndmi_fail_count=-1\n");
      StatusOr<DmiRemaining> left = lib->Remaining(1);
      BOOST_CHECK(left.status().code() == StatusCode::kUnavailable);
      BOOST_CHECK_MESSAGE(left.status().message().find("hymgr") != std::string::npos,
                          left.status().message());
      BOOST_CHECK_EQUAL(node.sleeps_ms().size(), 2u + 5u);  // transient_retries = 5
    }
  }
}

BOOST_AUTO_TEST_CASE(CreateIsNeverRetriedAfterASendOrReceiveError) {
  StubNode node(K100());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  node.Control("dmi_fail_code=34\ndmi_fail_count=1\n");
  const Status st = lib->CreateVhcu(1, 10, 1024);
  BOOST_CHECK(st.code() == StatusCode::kUnavailable);
  BOOST_CHECK(node.sleeps_ms().empty());
}

BOOST_AUTO_TEST_CASE(UnknownErrorIsNamedAndNotRetried) {
  StubNode node(K100());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  node.Control("dmi_fail_code=999\ndmi_fail_count=1\n");
  StatusOr<DmiDeviceInfo> info = lib->DeviceInfo(1);
  BOOST_CHECK(info.status().code() == StatusCode::kInternal);
  BOOST_CHECK_MESSAGE(info.status().message().find("DMI_STATUS_UNKNOWN_ERROR") != std::string::npos,
                      info.status().message());
  BOOST_CHECK(node.sleeps_ms().empty());
}

BOOST_AUTO_TEST_CASE(VdevInfoRejectedEarlyMeansTheDriverDoesNotKnowIt) {
  StubNode node(SourcePath("demo/nodes/z100l-mixed.yaml"));
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  int budget = 0;  // the countdown is per test, not per control file
  for (int code : {10, 6}) {
    node.Control("dmi_fail_code=" + std::to_string(code) +
                 "\ndmi_fail_count=" + std::to_string(++budget) + "\n");
    StatusOr<DmiDeviceInfo> info = lib->VhcuInfo(0);
    BOOST_CHECK_MESSAGE(info.status().code() == StatusCode::kNotFound,
                        code << ": " << info.status().ToString());
  }
}

BOOST_AUTO_TEST_CASE(ResetRequiredMakesThatCardUnhealthyUntilItAnswersAgain) {
  StubNode node(ProbeOrder());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  node.Control("reset_required=5\n");
  StatusOr<DmiDeviceInfo> info = lib->DeviceInfo(5);
  BOOST_CHECK(info.status().code() == StatusCode::kAborted);
  BOOST_CHECK_MESSAGE(info.status().message().find("RESET_REQUIRED") != std::string::npos,
                      info.status().message());
  StatusOr<std::vector<CardHealthReport>> health = lib->QueryHealth();
  BOOST_REQUIRE_MESSAGE(health.ok(), health.status().ToString());
  int unhealthy = 0;
  for (const CardHealthReport& r : *health) {
    if (r.health == Health::kHealthy) continue;
    ++unhealthy;
    BOOST_CHECK_EQUAL(r.bdf, kProbeBdf.at(5));
    BOOST_CHECK_MESSAGE(r.reason.find("needs a reset") != std::string::npos, r.reason);
  }
  BOOST_CHECK_EQUAL(unhealthy, 1);
  node.Control("");  // reset done
  health = lib->QueryHealth();
  BOOST_REQUIRE(health.ok());
  for (const CardHealthReport& r : *health) BOOST_CHECK(r.health == Health::kHealthy);
}

BOOST_AUTO_TEST_CASE(HymgrDownAtTheFirstCallFailsStartUpNamingTheCause) {
  StubNode node(K100());
  node.Control("hymgr=down\n");
  StatusOr<std::unique_ptr<VendorLib>> lib = NewDlopenVendorLib(node.Options());
  BOOST_REQUIRE(lib.ok());
  const Status st = (*lib)->Init();
  BOOST_REQUIRE(!st.ok());
  BOOST_CHECK_MESSAGE(st.message().find("is the hymgr service running? is /dev/mkfd present and "
                                        "mounted?") != std::string::npos,
                      st.message());
  // libhydmi never initialises again in this process, even once hymgr runs.
  node.Control("");
  BOOST_CHECK(!(*lib)->Init().ok());
  BOOST_CHECK_EQUAL(node.RsmiRefcount(), 0);
}

BOOST_AUTO_TEST_CASE(DmiGoneAfterStartIsAFailedHealthQueryNeverAnUnhealthyCard) {
  StubNode node(K100());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  BOOST_REQUIRE(lib->QueryHealth().ok());
  node.Control("dmi_fail_code=13\ndmi_fail_count=-1\n");
  (void)lib->DeviceInfo(0);  // the call that finds DMI gone
  node.Control("");          // even a recovered hymgr does not help this process
  StatusOr<std::vector<CardHealthReport>> health = lib->QueryHealth();
  BOOST_REQUIRE(!health.ok());
  BOOST_CHECK_MESSAGE(
      health.status().message().find("only a restart recovers") != std::string::npos,
      health.status().message());
}

BOOST_AUTO_TEST_CASE(AFailedReinitAtStartUpShutsRsmiDownOnce) {
  StubNode node(K100());
  // Counts disagree (a card missing from RSMI), so Init re-initialises, and
  // that re-init fails: RSMI is already down and must not be shut down again.
  node.Control("vanish_card=5\nrsmi_init_fails_after=1\n");
  const int unbalanced = node.RsmiUnbalancedShutdowns();
  DlopenVendorLibOptions o = node.Options();
  o.init_retries = 1;
  StatusOr<std::unique_ptr<VendorLib>> lib = NewDlopenVendorLib(o);
  BOOST_REQUIRE(lib.ok());
  BOOST_CHECK(!(*lib)->Init().ok());
  (*lib)->Shutdown();
  BOOST_CHECK_EQUAL(node.RsmiUnbalancedShutdowns() - unbalanced, 0);
  BOOST_CHECK_EQUAL(node.RsmiRefcount(), 0);
}

// The libraries are self-contained; none of their symbols may become
// visible to the rest of the process.
BOOST_AUTO_TEST_CASE(TheLibrariesAreLoadedLocally) {
  StubNode node(K100());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  for (const char* symbol :
       {"rsmi_init", "rsmi_dev_pci_id_get", "dmiGetDeviceCount", "nvmlGetSystemMigMode"}) {
    BOOST_CHECK_MESSAGE(dlsym(RTLD_DEFAULT, symbol) == nullptr, symbol << " leaked");
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
