// Node files: driver state, PCI scan, BDF formatting, and the RSMI/DMI map.
#include "vendor/node_files.h"

#include <boost/test/unit_test.hpp>

#include "testing/testutil.h"
#include "vendor/dlopen_vendor_lib_impl.h"

namespace hcudp::vendor {
namespace {

using hcudp::testing::TempDir;
using hcudp::testing::WriteFile;

void AddPci(const TempDir& root, const std::string& bdf, const std::string& vendor,
            const std::string& device, const std::string& pci_class) {
  const std::string dir = root.Join("sys/bus/pci/devices/" + bdf);
  WriteFile(dir + "/vendor", vendor + "\n");
  WriteFile(dir + "/device", device + "\n");
  WriteFile(dir + "/class", pci_class + "\n");
}

BOOST_AUTO_TEST_SUITE(NodeFiles)

BOOST_AUTO_TEST_CASE(DriverIsLiveOnlyWhenInitstateSaysLive) {
  TempDir root;
  std::string state;
  BOOST_CHECK(!DriverModuleLive(root.path(), &state));
  BOOST_CHECK_EQUAL(state, "not loaded");
  WriteFile(root.Join("sys/module/hycu/initstate"), "coming\n");
  BOOST_CHECK(!DriverModuleLive(root.path(), &state));
  BOOST_CHECK_EQUAL(state, "coming");
  WriteFile(root.Join("sys/module/hycu/initstate"), "live\n");
  BOOST_CHECK(DriverModuleLive(root.path()));
}

BOOST_AUTO_TEST_CASE(OlderHydcuModuleCountsToo) {
  TempDir root;
  WriteFile(root.Join("sys/module/hydcu/initstate"), "live\n");
  WriteFile(root.Join("sys/module/hydcu/version"), "6.2.26-V1.0\n");
  BOOST_CHECK(DriverModuleLive(root.path()));
  StatusOr<std::string> v = DriverModuleVersion(root.path());
  BOOST_REQUIRE(v.ok());
  BOOST_CHECK_EQUAL(*v, "6.2.26-V1.0");
}

BOOST_AUTO_TEST_CASE(PciScanKeepsOnlyHygonDisplayAndCoprocessorFunctions) {
  TempDir root;
  AddPci(root, "0000:09:00.0", "0x1d94", "0x6210", "0x038000");  // HCU, display
  AddPci(root, "0000:0C:00.0", "0x1d94", "0x6310", "0x0b4000");  // HCU, co-processor
  AddPci(root, "0000:00:00.0", "0x1d94", "0x1450", "0x060000");  // Hygon root complex
  AddPci(root, "0000:02:00.0", "0x1a03", "0x2000", "0x030000");  // ASPEED VGA
  std::vector<PciHcu> got = ScanPciHcus(root.path());
  BOOST_REQUIRE_EQUAL(got.size(), 2u);
  BOOST_CHECK_EQUAL(got[0].bdf, "0000:09:00.0");
  BOOST_CHECK_EQUAL(got[0].device_id, 0x6210);
  BOOST_CHECK_EQUAL(got[1].bdf, "0000:0c:00.0");
}

BOOST_AUTO_TEST_CASE(BdfIdFormatsLowerCaseAndIgnoresPartitionBits) {
  BOOST_CHECK_EQUAL(FormatBdfId((0x0ull << 32) | (0x09 << 8)), "0000:09:00.0");
  BOOST_CHECK_EQUAL(FormatBdfId((0x1ull << 32) | (0xab << 8) | (0x1f << 3) | 7), "0001:ab:1f.7");
  BOOST_CHECK_EQUAL(FormatBdfId((0x3ull << 28) | (0x8b << 8)), "0000:8b:00.0");
}

BOOST_AUTO_TEST_CASE(CardMapIsIdentityWhenRsmiListsCardsInPciOrder) {
  std::vector<CardFacts> rsmi = {{"0000:09:00.0", 0x6210}, {"0000:0c:00.0", 0x6210}};
  std::vector<PciHcu> pci = {{"0000:09:00.0", 0x6210}, {"0000:0c:00.0", 0x6210}};
  std::string problems;
  CardMap map = BuildCardMap(rsmi, {"K100_AI", "K100_AI"}, &pci, &problems);
  BOOST_CHECK_MESSAGE(map.verified, problems);
  BOOST_CHECK(map.dmi_index == (std::vector<int>{0, 1}));
}

BOOST_AUTO_TEST_CASE(CardMapFollowsPciOrderWhenRsmiOrderDiffers) {
  std::vector<CardFacts> rsmi = {{"0000:0c:00.0", 0x55b7}, {"0000:09:00.0", 0x6210}};
  std::string problems;
  CardMap map = BuildCardMap(rsmi, {"K100_AI", "Z100L"}, nullptr, &problems);
  BOOST_CHECK_MESSAGE(map.verified, problems);
  BOOST_CHECK(map.dmi_index == (std::vector<int>{1, 0}));
}

BOOST_AUTO_TEST_CASE(CardMapIsUnverifiedWhenCountsOrModelsDisagree) {
  std::string problems;
  CardMap short_dmi = BuildCardMap({{"0000:09:00.0", 0x6210}, {"0000:0c:00.0", 0x6210}},
                                   {"K100_AI"}, nullptr, &problems);
  BOOST_CHECK(!short_dmi.verified);
  BOOST_CHECK(problems.find("dmi lists 1") != std::string::npos);
  CardMap wrong_model = BuildCardMap({{"0000:09:00.0", 0x6210}}, {"Z100L"}, nullptr, &problems);
  BOOST_CHECK(!wrong_model.verified);
  BOOST_CHECK_MESSAGE(problems.find("K100_AI") != std::string::npos, problems);
  std::vector<PciHcu> pci = {{"0000:09:00.0", 0x6210}};
  CardMap not_in_pci = BuildCardMap({{"0000:0c:00.0", 0x6210}}, {"K100_AI"}, &pci, &problems);
  BOOST_CHECK(!not_in_pci.verified);
  BOOST_CHECK(not_in_pci.dmi_index == (std::vector<int>{0}));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::vendor
