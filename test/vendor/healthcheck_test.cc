// ParseHealthcheck: hy-smi --healthcheck output → per-BDF verdicts.
#include "hcudp/healthcheck.h"

#include <boost/test/unit_test.hpp>

namespace hcudp {
namespace {

BOOST_AUTO_TEST_SUITE(ParseHealthcheckSuite)

BOOST_AUTO_TEST_CASE(ParsesTheVendorsHcuLinesWithBanners) {
  const char* text =
      "============================ System Management Interface =============================\n"
      "HCU[0]          : Bus Id : 0000:09:00.0         : Healthy\n"
      "HCU[1]          : Bus Id : 0000:0c:00.0         : Healthy\n"
      "======================================================================================\n"
      "=================================== End of SMI Log ===================================\n";
  StatusOr<std::vector<HealthcheckEntry>> got = ParseHealthcheck(text);
  BOOST_REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  BOOST_REQUIRE_EQUAL(got->size(), 2u);
  BOOST_CHECK_EQUAL((*got)[0].index, 0);
  BOOST_CHECK_EQUAL((*got)[0].bdf, "0000:09:00.0");
  BOOST_CHECK_EQUAL((*got)[0].word, "Healthy");
  BOOST_CHECK((*got)[0].health == Health::kHealthy);
  BOOST_CHECK_EQUAL((*got)[1].bdf, "0000:0c:00.0");
}

BOOST_AUTO_TEST_CASE(AcceptsTheOlderDcuForm) {
  StatusOr<std::vector<HealthcheckEntry>> got =
      ParseHealthcheck("DCU[3] : Bus Id : 0000:8B:00.0 : Healthy\n");
  BOOST_REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  BOOST_CHECK_EQUAL((*got)[0].index, 3);
  BOOST_CHECK_EQUAL((*got)[0].bdf, "0000:8b:00.0");  // lower-cased
}

BOOST_AUTO_TEST_CASE(ToleratesExtraSpacesTabsAndCrLf) {
  StatusOr<std::vector<HealthcheckEntry>> got =
      ParseHealthcheck("   HCU[12]\t:   Bus Id:0000:a9:00.0\t\t:    healthy   \r\n");
  BOOST_REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  BOOST_CHECK_EQUAL((*got)[0].index, 12);
  BOOST_CHECK_EQUAL((*got)[0].bdf, "0000:a9:00.0");
  BOOST_CHECK((*got)[0].health == Health::kHealthy);  // case-insensitive
}

BOOST_AUTO_TEST_CASE(AnyOtherWordIsUnhealthyAndKeptAsTheReason) {
  struct Case {
    const char* word;
  };
  for (const Case& c : {Case{"Error"}, Case{"Unhealthy"}, Case{"Warning"}, Case{"HEALTHYISH"}}) {
    const std::string line = std::string("HCU[0] : Bus Id : 0000:09:00.0 : ") + c.word + "\n";
    StatusOr<std::vector<HealthcheckEntry>> got = ParseHealthcheck(line);
    BOOST_REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    BOOST_CHECK_MESSAGE((*got)[0].health == Health::kUnhealthy, c.word);
    BOOST_CHECK_EQUAL((*got)[0].word, c.word);
  }
}

BOOST_AUTO_TEST_CASE(OnlyTheFirstWordOfTheStatusCounts) {
  StatusOr<std::vector<HealthcheckEntry>> got =
      ParseHealthcheck("HCU[0] : Bus Id : 0000:09:00.0 : Healthy (ecc ok)\n");
  BOOST_REQUIRE(got.ok());
  BOOST_CHECK_EQUAL((*got)[0].word, "Healthy");
  BOOST_CHECK((*got)[0].health == Health::kHealthy);
}

BOOST_AUTO_TEST_CASE(ReturnsOnlyTheCardsPrinted) {
  // A card hy-smi omits is simply absent: the caller decides (unhealthy).
  StatusOr<std::vector<HealthcheckEntry>> got = ParseHealthcheck(
      "HCU[0] : Bus Id : 0000:09:00.0 : Healthy\nHCU[2] : Bus Id : 0000:2d:00.0 : Healthy\n");
  BOOST_REQUIRE(got.ok());
  BOOST_REQUIRE_EQUAL(got->size(), 2u);
  BOOST_CHECK_EQUAL((*got)[1].index, 2);
}

BOOST_AUTO_TEST_CASE(SkipsGarbageLinesThatAreNotCardLines) {
  StatusOr<std::vector<HealthcheckEntry>> got = ParseHealthcheck(
      "WARNING: something odd\n\n\x01\x02 binary noise\nHCU[0] : Bus Id : 0000:09:00.0 : Healthy\n"
      "random text HCU[1] : Bus Id : 0000:0c:00.0 : Error\n");
  BOOST_REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  BOOST_CHECK_EQUAL(got->size(), 1u);
}

// One odd line never freezes every card (reference/hcu-hardware.md §1.9):
// it is skipped, reported by line number, and the good lines still count.
BOOST_AUTO_TEST_CASE(MalformedCardLinesAreSkippedAndNamedWhileTheOthersCount) {
  struct Case {
    const char* text;
    const char* expect;
  };
  const Case cases[] = {
      {"HCU[x] : Bus Id : 0000:09:00.0 : Healthy", "not a number"},
      {"HCU[0 : Bus Id : 0000:09:00.0 : Healthy", "missing ']'"},
      {"HCU[0] : Bus : 0000:09:00.0 : Healthy", "Bus Id"},
      {"HCU[0] : Bus Id : 09:00.0 : Healthy", "PCI address"},
      {"HCU[0] : Bus Id : 0000:09:00.0 Healthy", "':' after the bus id"},
      {"HCU[0] : Bus Id : 0000:09:00.0 :", "missing status word"},
      {"HCU[] : Bus Id : 0000:09:00.0 : Healthy", "not a number"},
      {"HCU[0] : Bus Id : 0000:09:00.0 : ...", "missing status word"},
  };
  for (const Case& c : cases) {
    const std::string text =
        std::string("banner\n") + c.text + "\nHCU[1] : Bus Id : 0000:0c:00.0 : Error\n";
    std::vector<std::string> skipped;
    StatusOr<std::vector<HealthcheckEntry>> got = ParseHealthcheck(text, &skipped);
    BOOST_REQUIRE_MESSAGE(got.ok(), c.text << ": " << got.status().ToString());
    BOOST_REQUIRE_EQUAL(got->size(), 1u);
    BOOST_CHECK_EQUAL((*got)[0].bdf, "0000:0c:00.0");
    BOOST_CHECK((*got)[0].health == Health::kUnhealthy);
    BOOST_REQUIRE_EQUAL(skipped.size(), 1u);
    BOOST_CHECK_MESSAGE(skipped[0].find("line 2") != std::string::npos, skipped[0]);
    BOOST_CHECK_MESSAGE(skipped[0].find(c.expect) != std::string::npos, skipped[0]);
  }
}

BOOST_AUTO_TEST_CASE(OnlyMalformedCardLinesIsAnErrorNamingThem) {
  StatusOr<std::vector<HealthcheckEntry>> got =
      ParseHealthcheck("HCU[0] : Bus Id : garbled : Healthy\n");
  BOOST_REQUIRE(!got.ok());
  BOOST_CHECK_MESSAGE(got.status().message().find("line 1") != std::string::npos,
                      got.status().message());
}

BOOST_AUTO_TEST_CASE(TrailingPunctuationOnTheStatusWordIsIgnored) {
  for (const char* word : {"Healthy.", "Healthy,", "Healthy;", "Healthy!", "healthy..."}) {
    const std::string line = std::string("HCU[0] : Bus Id : 0000:09:00.0 : ") + word + "\n";
    StatusOr<std::vector<HealthcheckEntry>> got = ParseHealthcheck(line);
    BOOST_REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    BOOST_CHECK_MESSAGE((*got)[0].health == Health::kHealthy, word);
    BOOST_CHECK_MESSAGE((*got)[0].word.find_first_of(".,;!") == std::string::npos, word);
  }
  StatusOr<std::vector<HealthcheckEntry>> bad =
      ParseHealthcheck("HCU[0] : Bus Id : 0000:09:00.0 : Error.\n");
  BOOST_REQUIRE(bad.ok());
  BOOST_CHECK((*bad)[0].health == Health::kUnhealthy);
  BOOST_CHECK_EQUAL((*bad)[0].word, "Error");
}

BOOST_AUTO_TEST_CASE(ToleratesBusIdSpellingAndSpacing) {
  for (const char* line :
       {"HCU[0]:BusId:0000:09:00.0:Healthy", "HCU [0] : Bus  Id : 0000:09:00.0 : Healthy",
        "HCU[ 0 ] : bus id : 0000:09:00.0 : Healthy", "hcu[0] : BUS ID : 0000:09:00.0 : Healthy",
        "DCU[0]\t:\tBus Id\t:\t0000:09:00.0\t:\tHealthy"}) {
    StatusOr<std::vector<HealthcheckEntry>> got = ParseHealthcheck(line);
    BOOST_REQUIRE_MESSAGE(got.ok(), line << ": " << got.status().ToString());
    BOOST_CHECK_EQUAL((*got)[0].bdf, "0000:09:00.0");
    BOOST_CHECK((*got)[0].health == Health::kHealthy);
  }
}

BOOST_AUTO_TEST_CASE(TheSameBusIdTwiceKeepsTheWorseVerdict) {
  std::vector<std::string> skipped;
  StatusOr<std::vector<HealthcheckEntry>> got = ParseHealthcheck(
      "HCU[0] : Bus Id : 0000:09:00.0 : Healthy\nHCU[1] : Bus Id : 0000:09:00.0 : Error\n"
      "HCU[2] : Bus Id : 0000:0c:00.0 : Healthy\n",
      &skipped);
  BOOST_REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  BOOST_REQUIRE_EQUAL(got->size(), 2u);
  BOOST_CHECK((*got)[0].health == Health::kUnhealthy);
  BOOST_CHECK_EQUAL((*got)[0].word, "Error");
  BOOST_CHECK((*got)[1].health == Health::kHealthy);
  BOOST_REQUIRE_EQUAL(skipped.size(), 1u);
  BOOST_CHECK_MESSAGE(skipped[0].find("twice") != std::string::npos, skipped[0]);
}

BOOST_AUTO_TEST_CASE(OutputWithoutAnyCardLineIsAnError) {
  for (const char* text : {"", "\n\n", "hy-smi: error while loading shared libraries\n"}) {
    StatusOr<std::vector<HealthcheckEntry>> got = ParseHealthcheck(text);
    BOOST_CHECK_MESSAGE(!got.ok(), text);
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
