// DlopenVendorLib::QueryHealth: hy-smi verdicts matched by BDF, ECC and
// presence; a failed query is an error, never an unhealthy card. Also: a card
// that vanishes, and queries racing a re-initialisation.
#include <signal.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <map>
#include <thread>

#include "hcudp/dlopen_vendor_lib.h"
#include "stub_node.h"
#include "vendor/dlopen_vendor_lib_impl.h"

namespace hcudp {
namespace {

using testing::K100;
using testing::OpenAndInit;
using testing::SourcePath;
using testing::StubNode;

std::map<std::string, CardHealthReport> ByBdf(const std::vector<CardHealthReport>& reports) {
  std::map<std::string, CardHealthReport> m;
  for (const CardHealthReport& r : reports) m[r.bdf] = r;
  return m;
}

std::map<std::string, CardHealthReport> Health(VendorLib& lib) {
  StatusOr<std::vector<CardHealthReport>> got = lib.QueryHealth();
  BOOST_REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  return ByBdf(*got);
}

constexpr const char* kCard2 = "0000:49:00.0";

BOOST_AUTO_TEST_SUITE(VendorHealth)

BOOST_AUTO_TEST_CASE(AllCardsHealthyWhenHySmiSaysSo) {
  StubNode node(K100());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  std::map<std::string, CardHealthReport> h = Health(*lib);
  BOOST_REQUIRE_EQUAL(h.size(), 8u);
  for (const auto& [bdf, r] : h) {
    BOOST_CHECK_MESSAGE(r.health == Health::kHealthy, bdf + ": " + r.reason);
  }
}

BOOST_AUTO_TEST_CASE(OlderDcuLinesAreUnderstood) {
  StubNode node(K100());
  node.Control("hysmi_form=DCU\n");
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  std::map<std::string, CardHealthReport> h = Health(*lib);
  BOOST_CHECK_EQUAL(h.size(), 8u);
  BOOST_CHECK(h[kCard2].health == Health::kHealthy);
}

BOOST_AUTO_TEST_CASE(AnUnhealthyWordMarksThatCardByBdf) {
  StubNode node(K100());
  node.Control("hysmi_word=2:Error\n");
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  std::map<std::string, CardHealthReport> h = Health(*lib);
  BOOST_CHECK(h[kCard2].health == Health::kUnhealthy);
  BOOST_CHECK_MESSAGE(h[kCard2].reason.find("Error") != std::string::npos, h[kCard2].reason);
  BOOST_CHECK(h["0000:09:00.0"].health == Health::kHealthy);
}

BOOST_AUTO_TEST_CASE(HySmiIndicesAreIgnoredInFavourOfBdfs) {
  // With card 2 omitted, hy-smi numbers the following cards differently
  // from RSMI; each verdict must still land on the right card.
  StubNode node(K100());
  std::string yaml = testing::ReadFile(node.sim_node());
  const size_t card3 = yaml.find("index: 3");
  yaml.replace(yaml.find("health: Healthy", card3), 15, "health: Unhealthy");
  testing::WriteFile(node.sim_node(), yaml);
  node.Control("hysmi_word=2:-\n");  // hy-smi prints card 3 as HCU[2]
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  std::map<std::string, CardHealthReport> h = Health(*lib);
  BOOST_CHECK(h[kCard2].health == Health::kHealthy);  // missing once: kept
  int healthy = 0;
  for (const auto& [bdf, r] : h) healthy += r.health == Health::kHealthy;
  BOOST_CHECK_EQUAL(healthy, 7);
  BOOST_CHECK(h["0000:69:00.0"].health == Health::kUnhealthy);
}

// A card missing from one reading keeps its last verdict; missing from
// three in a row, it is reported missing (doc/real-node.md).
BOOST_AUTO_TEST_CASE(ACardMissingFromHySmiKeepsItsVerdictUntilThreeReadingsInARow) {
  StubNode node(K100());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  BOOST_CHECK(Health(*lib)[kCard2].health == Health::kHealthy);
  node.Control("hysmi_word=2:-\n");
  for (int reading = 1; reading <= 2; ++reading) {
    std::map<std::string, CardHealthReport> h = Health(*lib);
    BOOST_CHECK_MESSAGE(h[kCard2].health == Health::kHealthy, "reading " << reading);
  }
  std::map<std::string, CardHealthReport> h = Health(*lib);
  BOOST_CHECK(h[kCard2].health == Health::kUnhealthy);
  BOOST_CHECK_MESSAGE(h[kCard2].reason.find("missing from hy-smi") != std::string::npos,
                      h[kCard2].reason);
  int healthy = 0;
  for (const auto& [bdf, r] : h) healthy += r.health == Health::kHealthy;
  BOOST_CHECK_EQUAL(healthy, 7);
  // Listed again: its word counts at once.
  node.Control("");
  BOOST_CHECK(Health(*lib)[kCard2].health == Health::kHealthy);
}

BOOST_AUTO_TEST_CASE(AnUnhealthyCardThatDropsOutOfOneReadingStaysUnhealthy) {
  StubNode node(K100());
  node.Control("hysmi_word=2:Error\n");
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  BOOST_CHECK(Health(*lib)[kCard2].health == Health::kUnhealthy);
  node.Control("hysmi_word=2:-\n");
  std::map<std::string, CardHealthReport> h = Health(*lib);
  BOOST_CHECK(h[kCard2].health == Health::kUnhealthy);
  BOOST_CHECK_MESSAGE(h[kCard2].reason.find("Error") != std::string::npos, h[kCard2].reason);
}

BOOST_AUTO_TEST_CASE(OddLinesAmongGoodOnesNeverFreezeTheCards) {
  StubNode node(K100());
  node.Control("hysmi=odd\nhysmi_word=2:Error.\n");
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  std::map<std::string, CardHealthReport> h = Health(*lib);
  BOOST_REQUIRE_EQUAL(h.size(), 8u);
  BOOST_CHECK(h[kCard2].health == Health::kUnhealthy);
  BOOST_CHECK_MESSAGE(h[kCard2].reason == "hy-smi: Error", h[kCard2].reason);
  int healthy = 0;
  for (const auto& [bdf, r] : h) healthy += r.health == Health::kHealthy;
  BOOST_CHECK_EQUAL(healthy, 7);
}

// The daemon blocks SIGTERM in every thread and ignores SIGPIPE; hy-smi must
// not inherit either (a tool that ignores SIGTERM cannot be stopped).
BOOST_AUTO_TEST_CASE(HySmiStartsWithDefaultSignalsAndAnEmptyMask) {
  StubNode node(K100());
  testing::TempDir dir;
  const std::string report = dir.Join("signals");
  node.Control("hysmi_signals=" + report + "\n");
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  struct sigaction ignore {
  }, old_term{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGTERM, &ignore, &old_term);
  sigset_t block, old_mask;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGINT);
  pthread_sigmask(SIG_BLOCK, &block, &old_mask);
  StatusOr<std::vector<CardHealthReport>> got = lib->QueryHealth();
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  BOOST_REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  BOOST_CHECK_EQUAL(testing::ReadFile(report), "blocked 0\nsigterm default\n");
}

BOOST_AUTO_TEST_CASE(SimNodeHealthFlowsThroughTheFakeHySmi) {
  StubNode node(K100());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  std::string yaml = testing::ReadFile(node.sim_node());
  const size_t card2 = yaml.find("index: 2");
  yaml.replace(yaml.find("health: Healthy", card2), 15, "health: Unhealthy");
  testing::WriteFile(node.sim_node(), yaml);
  std::map<std::string, CardHealthReport> h = Health(*lib);
  BOOST_CHECK(h[kCard2].health == Health::kUnhealthy);
}

BOOST_AUTO_TEST_CASE(UncorrectableEccMarksACardUnhealthy) {
  StubNode node(K100());
  node.Control("ecc_uncorrectable=2:3\n");
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  StatusOr<uint64_t> ue = static_cast<vendor::DlopenVendorLib&>(*lib).UncorrectableEccCount(2);
  BOOST_REQUIRE(ue.ok());
  BOOST_CHECK_EQUAL(*ue, 3u);
  std::map<std::string, CardHealthReport> h = Health(*lib);
  BOOST_CHECK(h[kCard2].health == Health::kUnhealthy);
  BOOST_CHECK_MESSAGE(h[kCard2].reason.find("3 uncorrectable ECC") != std::string::npos,
                      h[kCard2].reason);
}

BOOST_AUTO_TEST_CASE(HySmiFailingIsAnErrorNotAnUnhealthyCard) {
  StubNode node(K100());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  for (const char* mode : {"hysmi=fail\n", "hysmi=empty\n"}) {
    node.Control(mode);
    StatusOr<std::vector<CardHealthReport>> got = lib->QueryHealth();
    BOOST_CHECK_MESSAGE(!got.ok(), mode);
  }
}

BOOST_AUTO_TEST_CASE(HySmiThatHangsIsKilledAfterTheTimeout) {
  StubNode node(K100());
  DlopenVendorLibOptions o = node.Options();
  o.healthcheck_timeout_ms = 300;
  std::unique_ptr<VendorLib> lib = OpenAndInit(o);
  node.Control("hysmi=hang\n");
  const auto start = std::chrono::steady_clock::now();
  StatusOr<std::vector<CardHealthReport>> got = lib->QueryHealth();
  const auto took = std::chrono::steady_clock::now() - start;
  BOOST_CHECK(got.status().code() == StatusCode::kDeadlineExceeded);
  BOOST_CHECK(took < std::chrono::seconds(5));
}

BOOST_AUTO_TEST_CASE(MissingHySmiIsAnError) {
  StubNode node(K100());
  DlopenVendorLibOptions o = node.Options();
  std::unique_ptr<VendorLib> lib = OpenAndInit(o);
  // Same libraries, a hyhal without bin/hy-smi.
  testing::TempDir dir;
  std::filesystem::create_directories(dir.Join("hyhal"));
  std::filesystem::create_directory_symlink(StubNode::StubHyhal() + "/lib", dir.Join("hyhal/lib"));
  o.hyhal_path = dir.Join("hyhal");
  std::unique_ptr<VendorLib> no_tool = OpenAndInit(o);
  StatusOr<std::vector<CardHealthReport>> got = no_tool->QueryHealth();
  BOOST_CHECK(got.status().code() == StatusCode::kNotFound);
}

BOOST_AUTO_TEST_CASE(ACardThatVanishesIsReportedUnhealthyAndTheLibraryReinitialises) {
  StubNode node(K100());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  BOOST_CHECK_EQUAL(node.RsmiRefcount(), 1);
  node.Control("vanish_card=5\n");
  std::map<std::string, CardHealthReport> h = Health(*lib);
  BOOST_REQUIRE_EQUAL(h.size(), 8u);
  const CardHealthReport& gone = h["0000:a9:00.0"];
  BOOST_CHECK(gone.health == Health::kUnhealthy);
  BOOST_CHECK_MESSAGE(gone.reason.find("no longer reported") != std::string::npos, gone.reason);
  StatusOr<int> count = lib->CardCount();
  BOOST_REQUIRE(count.ok());
  BOOST_CHECK_EQUAL(*count, 7);
  BOOST_CHECK_EQUAL(node.RsmiRefcount(), 1);  // re-init kept init/shutdown balanced
  // The card comes back: healthy again.
  node.Control("");
  h = Health(*lib);
  BOOST_CHECK(h["0000:a9:00.0"].health == Health::kHealthy);
}

BOOST_AUTO_TEST_CASE(AMismatchThatReinitDoesNotCureIsNotRetriedEveryPoll) {
  StubNode node(K100());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  node.Control("vanish_card=5\n");
  const int before = node.RsmiInitCalls();
  for (int poll = 0; poll < 4; ++poll) BOOST_CHECK(lib->QueryHealth().ok());
  BOOST_CHECK_EQUAL(node.RsmiInitCalls() - before, 1);  // once, not per poll
  node.Control("");
  BOOST_CHECK(lib->QueryHealth().ok());
  BOOST_CHECK_EQUAL(node.RsmiInitCalls() - before, 2);  // the card came back
}

BOOST_AUTO_TEST_CASE(AFailedReinitialisationIsRetriedAtTheNextPoll) {
  StubNode node(K100());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  node.Control("vanish_card=5\nrsmi_init_failures=1\n");
  StatusOr<std::vector<CardHealthReport>> failed = lib->QueryHealth();
  BOOST_CHECK(!failed.ok());  // the library is down: no verdicts, previous health stays
  BOOST_CHECK_EQUAL(node.RsmiRefcount(), 0);
  std::map<std::string, CardHealthReport> h = Health(*lib);  // re-initialised now
  BOOST_CHECK_EQUAL(node.RsmiRefcount(), 1);
  BOOST_CHECK(h["0000:a9:00.0"].health == Health::kUnhealthy);
  StatusOr<int> count = lib->CardCount();
  BOOST_REQUIRE(count.ok());
  BOOST_CHECK_EQUAL(*count, 7);
}

BOOST_AUTO_TEST_CASE(InitWaitsForCountsToAgreeThenContinues) {
  StubNode node(K100());
  node.Control("vanish_card=5\n");
  DlopenVendorLibOptions o = node.Options();
  std::unique_ptr<VendorLib> lib = OpenAndInit(o);
  // rsmi=7 against 8 PCI functions: re-initialised twice, then carried on.
  BOOST_CHECK((node.sleeps_ms() == std::vector<int>{10000, 10000}));
  StatusOr<int> count = lib->CardCount();
  BOOST_REQUIRE(count.ok());
  BOOST_CHECK_EQUAL(*count, 7);
  BOOST_CHECK_EQUAL(node.RsmiRefcount(), 1);
}

BOOST_AUTO_TEST_CASE(QueriesNeverRaceAReinitialisation) {
  StubNode node(K100());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0}, calls{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!stop) {
        // Card 0 exists throughout; a call that hit a shut-down library
        // would fail with INIT_ERROR.
        if (!lib->PciBdf(0).ok() || !lib->CardCount().ok()) ++failures;
        ++calls;
      }
    });
  }
  for (int round = 0; round < 6; ++round) {
    node.Control(round % 2 == 0 ? "vanish_card=5\n" : "");
    (void)lib->QueryHealth();  // re-initialises on every change
  }
  stop = true;
  for (std::thread& t : readers) t.join();
  BOOST_CHECK_EQUAL(failures.load(), 0);
  BOOST_CHECK_GT(calls.load(), 0);
  BOOST_CHECK_EQUAL(node.RsmiRefcount(), 1);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
