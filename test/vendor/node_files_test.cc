// Node files: driver state, PCI scan, BDF formatting, the KFD topology and
// the RSMI/DMI map.
#include "vendor/node_files.h"

#include <boost/test/unit_test.hpp>

#include "testing/testutil.h"
#include "vendor/dlopen_vendor_lib_impl.h"
#include "vendor/kfd_topology.h"

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
  BOOST_CHECK(!DriverModuleLive(internal::HostFs(root.path()), &state));
  BOOST_CHECK_EQUAL(state, "not loaded");
  WriteFile(root.Join("sys/module/hycu/initstate"), "coming\n");
  BOOST_CHECK(!DriverModuleLive(internal::HostFs(root.path()), &state));
  BOOST_CHECK_EQUAL(state, "coming");
  WriteFile(root.Join("sys/module/hycu/initstate"), "live\n");
  BOOST_CHECK(DriverModuleLive(internal::HostFs(root.path())));
}

BOOST_AUTO_TEST_CASE(OlderHydcuModuleCountsToo) {
  TempDir root;
  WriteFile(root.Join("sys/module/hydcu/initstate"), "live\n");
  WriteFile(root.Join("sys/module/hydcu/version"), "6.2.26-V1.0\n");
  BOOST_CHECK(DriverModuleLive(internal::HostFs(root.path())));
  StatusOr<std::string> v = DriverModuleVersion(internal::HostFs(root.path()));
  BOOST_REQUIRE(v.ok());
  BOOST_CHECK_EQUAL(*v, "6.2.26-V1.0");
}

BOOST_AUTO_TEST_CASE(PciScanKeepsOnlyHygonDisplayAndCoprocessorFunctions) {
  TempDir root;
  AddPci(root, "0000:09:00.0", "0x1d94", "0x6210", "0x038000");  // HCU, display
  AddPci(root, "0000:0C:00.0", "0x1d94", "0x6310", "0x0b4000");  // HCU, co-processor
  AddPci(root, "0000:00:00.0", "0x1d94", "0x1450", "0x060000");  // Hygon root complex
  AddPci(root, "0000:02:00.0", "0x1a03", "0x2000", "0x030000");  // ASPEED VGA
  std::vector<PciHcu> got = ScanPciHcus(internal::HostFs(root.path()));
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

// A KFD GPU node for `bdf` ("dddd:bb:dd.f") as the driver writes it.
void AddKfdNode(const TempDir& root, int node, const std::string& bdf) {
  const std::string dir = root.Join("sys/class/kfd/kfd/topology/nodes/" + std::to_string(node));
  const unsigned domain = std::stoul(bdf.substr(0, 4), nullptr, 16);
  const unsigned bus = std::stoul(bdf.substr(5, 2), nullptr, 16);
  const unsigned dev = std::stoul(bdf.substr(8, 2), nullptr, 16);
  const unsigned fn = std::stoul(bdf.substr(11, 1), nullptr, 16);
  WriteFile(dir + "/gpu_id", std::to_string(40000 + node) + "\n");
  WriteFile(dir + "/properties", "cpu_cores_count 0\nlocation_id " +
                                     std::to_string(bus << 8 | dev << 3 | fn) + "\ndomain " +
                                     std::to_string(domain) + "\ndrm_render_minor 128\n");
}

void AddKfdCpuNode(const TempDir& root, int node) {
  const std::string dir = root.Join("sys/class/kfd/kfd/topology/nodes/" + std::to_string(node));
  WriteFile(dir + "/gpu_id", "0\n");
  WriteFile(dir + "/properties", "cpu_cores_count 32\nlocation_id 0\ndomain 0\n");
}

// libhydmi's index k is the k-th GPU node in numeric node order
// (reference/hcu-hardware.md §1.9): CPU nodes are skipped, node 10 comes
// after node 9, and the BDFs need not be in PCI order.
BOOST_AUTO_TEST_CASE(KfdTopologyGivesGpuBdfsInNumericNodeOrder) {
  TempDir root;
  AddKfdCpuNode(root, 0);
  AddKfdCpuNode(root, 1);
  const std::vector<std::string> probe = {"0000:69:00.0", "0000:09:00.0", "0000:e9:00.0",
                                          "0000:29:00.0", "0000:c9:00.0", "0000:49:00.0",
                                          "0000:a9:00.0", "0000:89:00.0", "0001:0a:1f.7"};
  for (size_t i = 0; i < probe.size(); ++i) AddKfdNode(root, static_cast<int>(i) + 2, probe[i]);
  StatusOr<std::vector<std::string>> got = ReadKfdGpuBdfs(internal::HostFs(root.path()));
  BOOST_REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  BOOST_CHECK(*got == probe);
}

BOOST_AUTO_TEST_CASE(KfdTopologyErrorsNameWhatIsMissing) {
  TempDir root;
  StatusOr<std::vector<std::string>> none = ReadKfdGpuBdfs(internal::HostFs(root.path()));
  BOOST_CHECK(none.status().code() == StatusCode::kNotFound);
  BOOST_CHECK_MESSAGE(none.status().message().find("topology") != std::string::npos,
                      none.status().message());
  WriteFile(root.Join("sys/class/kfd/kfd/topology/nodes/0/gpu_id"), "123\n");
  WriteFile(root.Join("sys/class/kfd/kfd/topology/nodes/0/properties"), "domain 0\n");
  StatusOr<std::vector<std::string>> bad = ReadKfdGpuBdfs(internal::HostFs(root.path()));
  BOOST_CHECK(!bad.ok());
  BOOST_CHECK_MESSAGE(bad.status().message().find("nodes/0/properties") != std::string::npos,
                      bad.status().message());
}

BOOST_AUTO_TEST_CASE(CardMapFollowsTheKfdTopologyNotPciOrder) {
  // RSMI lists the cards in probe order; so does the KFD topology, and PCI
  // order is something else: ranking by BDF would pick the wrong cards.
  std::vector<CardFacts> rsmi = {
      {"0000:69:00.0", 0x6210}, {"0000:09:00.0", 0x6210}, {"0000:e9:00.0", 0x6210}};
  std::vector<std::string> kfd = {"0000:69:00.0", "0000:09:00.0", "0000:e9:00.0"};
  std::string problems;
  CardMap map = BuildCardMap(rsmi, kfd, {"K100_AI", "K100_AI", "K100_AI"}, nullptr, &problems);
  BOOST_CHECK_MESSAGE(map.verified, problems);
  BOOST_CHECK(map.dmi_index == (std::vector<int>{0, 1, 2}));
  // RSMI in another order than DMI: each card gets its KFD position.
  std::vector<CardFacts> shuffled = {
      {"0000:e9:00.0", 0x6210}, {"0000:69:00.0", 0x6210}, {"0000:09:00.0", 0x6210}};
  map = BuildCardMap(shuffled, kfd, {"K100_AI", "K100_AI", "K100_AI"}, nullptr, &problems);
  BOOST_CHECK_MESSAGE(map.verified, problems);
  BOOST_CHECK(map.dmi_index == (std::vector<int>{2, 0, 1}));
}

BOOST_AUTO_TEST_CASE(CardMapChecksModelsAtTheKfdPosition) {
  std::vector<CardFacts> rsmi = {{"0000:0c:00.0", 0x55b7}, {"0000:09:00.0", 0x6210}};
  std::vector<std::string> kfd = {"0000:0c:00.0", "0000:09:00.0"};
  std::string problems;
  CardMap map = BuildCardMap(rsmi, kfd, {"Z100L", "K100_AI"}, nullptr, &problems);
  BOOST_CHECK_MESSAGE(map.verified, problems);
  BOOST_CHECK(map.dmi_index == (std::vector<int>{0, 1}));
  CardMap wrong = BuildCardMap(rsmi, kfd, {"K100_AI", "Z100L"}, nullptr, &problems);
  BOOST_CHECK(!wrong.verified);
  BOOST_CHECK_MESSAGE(problems.find("K100_AI") != std::string::npos, problems);
}

BOOST_AUTO_TEST_CASE(CardMapIsIdentityWithAWarningOnlyWithoutTopology) {
  std::string problems;
  CardMap map = BuildCardMap({{"0000:69:00.0", 0x6210}, {"0000:09:00.0", 0x6210}},
                             NotFoundError("no KFD topology under /x"), {"K100_AI", "K100_AI"},
                             nullptr, &problems);
  BOOST_CHECK(!map.verified);
  BOOST_CHECK(map.dmi_index == (std::vector<int>{0, 1}));
  BOOST_CHECK_MESSAGE(problems.find("KFD topology unreadable") != std::string::npos, problems);
}

BOOST_AUTO_TEST_CASE(ACardTheTopologyDoesNotListGetsNoDmiIndex) {
  std::string problems;
  std::vector<std::string> kfd = {"0000:09:00.0"};
  CardMap map = BuildCardMap({{"0000:0c:00.0", 0x6210}, {"0000:09:00.0", 0x6210}}, kfd, {"K100_AI"},
                             nullptr, &problems);
  BOOST_CHECK(!map.verified);
  BOOST_CHECK(map.dmi_index == (std::vector<int>{-1, 0}));
  BOOST_CHECK_MESSAGE(problems.find("0000:0c:00.0") != std::string::npos, problems);
}

BOOST_AUTO_TEST_CASE(CardMapIsUnverifiedWhenCountsOrPciDisagree) {
  std::string problems;
  std::vector<std::string> kfd = {"0000:09:00.0", "0000:0c:00.0"};
  CardMap short_dmi = BuildCardMap({{"0000:09:00.0", 0x6210}, {"0000:0c:00.0", 0x6210}}, kfd,
                                   {"K100_AI"}, nullptr, &problems);
  BOOST_CHECK(!short_dmi.verified);
  BOOST_CHECK(problems.find("dmi lists 1") != std::string::npos);
  std::vector<PciHcu> pci = {{"0000:09:00.0", 0x6210}};
  CardMap not_in_pci =
      BuildCardMap({{"0000:0c:00.0", 0x6210}}, std::vector<std::string>{"0000:0c:00.0"},
                   {"K100_AI"}, &pci, &problems);
  BOOST_CHECK(!not_in_pci.verified);
  BOOST_CHECK(not_in_pci.dmi_index == (std::vector<int>{0}));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::vendor
