// DlopenVendorLib against the stand-in vendor libraries: what a real node's
// libraries answer, and every way loading and start-up can go wrong.
#include "hcudp/dlopen_vendor_lib.h"

#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>

#include "stub_node.h"
#include "testing/testutil.h"
#include "vendor/dlopen_vendor_lib_impl.h"

namespace hcudp {
namespace {

using testing::K100;
using testing::OpenAndInit;
using testing::SourcePath;
using testing::StubNode;
using testing::TempDir;
using testing::WriteFile;

std::unique_ptr<VendorLib> Open(const DlopenVendorLibOptions& options) {
  StatusOr<std::unique_ptr<VendorLib>> lib = NewDlopenVendorLib(options);
  BOOST_REQUIRE_MESSAGE(lib.ok(), lib.status().ToString());
  return std::move(lib).value();
}

// A lib dir holding symlinks to chosen stand-in files under chosen names.
std::string LibDirWith(const TempDir& dir,
                       const std::vector<std::pair<std::string, std::string>>& links) {
  std::filesystem::create_directories(dir.Join("hyhal/lib"));
  for (const auto& [target, name] : links) {
    std::filesystem::create_symlink(target, dir.Join("hyhal/lib/" + name));
  }
  return dir.Join("hyhal");
}

BOOST_AUTO_TEST_SUITE(DlopenVendorLibSuite)

BOOST_AUTO_TEST_CASE(CountsTheCardsOfTheNode) {
  StubNode node(K100());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  StatusOr<int> rsmi = lib->CardCount();
  StatusOr<int> dmi = static_cast<vendor::DlopenVendorLib&>(*lib).DmiCardCount();
  BOOST_REQUIRE(rsmi.ok() && dmi.ok());
  BOOST_CHECK_EQUAL(*rsmi, 8);
  BOOST_CHECK_EQUAL(*dmi, 8);
}

BOOST_AUTO_TEST_CASE(ReportsEachCardsIdentityFromRsmiAndDmi) {
  StubNode node(K100());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  StatusOr<std::string> bdf = lib->PciBdf(1);
  BOOST_REQUIRE(bdf.ok());
  BOOST_CHECK_EQUAL(*bdf, "0000:29:00.0");
  StatusOr<std::string> serial = lib->Serial(0);
  BOOST_REQUIRE(serial.ok());
  BOOST_CHECK_EQUAL(*serial, "T6T8290019020401");
  StatusOr<uint16_t> id = lib->PciDeviceId(0);
  BOOST_REQUIRE(id.ok());
  BOOST_CHECK_EQUAL(*id, 0x6210);
  StatusOr<uint64_t> mem = lib->MemoryTotalBytes(0);
  BOOST_REQUIRE(mem.ok());
  BOOST_CHECK_EQUAL(*mem, 65520ull * kMiB);
  StatusOr<DmiDeviceInfo> info = lib->DeviceInfo(3);
  BOOST_REQUIRE_MESSAGE(info.ok(), info.status().ToString());
  BOOST_CHECK_EQUAL(info->name, "K100_AI");
  BOOST_CHECK_EQUAL(info->compute_units, 120);
  BOOST_CHECK_EQUAL(info->parent_card, 3);
  BOOST_CHECK(lib->UniqueId(0).ok());
}

BOOST_AUTO_TEST_CASE(FormatsBdfsWithDomainDeviceAndFunction) {
  TempDir dir;
  std::string yaml = testing::ReadFile(K100());
  yaml.replace(yaml.find("0000:09:00.0"), 12, "0001:0a:1f.3");
  // The card's root complex moves to its new domain with it.
  yaml.replace(yaml.find("pcieRoot: pci0000:00"), 20, "pcieRoot: pci0001:00");
  WriteFile(dir.Join("node.yaml"), yaml);
  StubNode node(dir.Join("node.yaml"));
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  StatusOr<std::string> bdf = lib->PciBdf(0);
  BOOST_REQUIRE(bdf.ok());
  BOOST_CHECK_EQUAL(*bdf, "0001:0a:1f.3");
}

BOOST_AUTO_TEST_CASE(ReportsNumaNodesAndNoneAsMinusOne) {
  TempDir dir;
  std::string yaml = testing::ReadFile(K100());
  yaml.replace(yaml.find("numaNode: 1"), 11, "numaNode: -1");
  WriteFile(dir.Join("node.yaml"), yaml);
  StubNode node(dir.Join("node.yaml"));
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  StatusOr<int> numa0 = lib->NumaNode(0);
  StatusOr<int> numa1 = lib->NumaNode(1);
  BOOST_REQUIRE(numa0.ok() && numa1.ok());
  BOOST_CHECK_EQUAL(*numa0, 0);
  BOOST_CHECK_EQUAL(*numa1, kNoNumaNode);
}

BOOST_AUTO_TEST_CASE(ReportsLinksAsTheDriverDoes) {
  StubNode node(K100());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  StatusOr<RsmiLink> link = lib->LinkBetween(0, 5);
  BOOST_REQUIRE_MESSAGE(link.ok(), link.status().ToString());
  BOOST_CHECK(link->type == LinkType::kHsl);
  BOOST_CHECK_EQUAL(link->hops, 1);
  BOOST_CHECK_EQUAL(link->weight, 15);
  StatusOr<RsmiLink> mixed = [&] {
    StubNode z(SourcePath("demo/nodes/z100l-mixed.yaml"));
    return OpenAndInit(z)->LinkBetween(0, 3);
  }();
  BOOST_REQUIRE(mixed.ok());
  BOOST_CHECK(mixed->type == LinkType::kPcie);
}

BOOST_AUTO_TEST_CASE(ReadsPreSplitVhcusAndRemainingCapacity) {
  StubNode node(SourcePath("demo/nodes/z100l-mixed.yaml"));
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  StatusOr<DmiDeviceInfo> v0 = lib->VhcuInfo(0);
  BOOST_REQUIRE_MESSAGE(v0.ok(), v0.status().ToString());
  BOOST_CHECK_EQUAL(v0->parent_card, 2);
  BOOST_CHECK_EQUAL(v0->compute_units, 15);
  BOOST_CHECK_EQUAL(v0->global_memory_bytes, 8188ull * kMiB);
  StatusOr<DmiDeviceInfo> free_id = lib->VhcuInfo(40);
  BOOST_CHECK(free_id.status().code() == StatusCode::kNotFound);
  StatusOr<int> max = lib->MaxVhcusPerCard();
  BOOST_REQUIRE(max.ok());
  BOOST_CHECK_EQUAL(*max, 4);
  StatusOr<DmiRemaining> left = lib->Remaining(0);
  BOOST_REQUIRE(left.ok());
  BOOST_CHECK_EQUAL(left->compute_units, 60);
}

BOOST_AUTO_TEST_CASE(CreatesAndDestroysAVhcuThroughDmi) {
  StubNode node(K100());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  BOOST_REQUIRE(!testing::PathExists(node.host_root() + "/etc/vdev/vdev0.conf"));
  const Status created = lib->CreateVhcu(1, 30, 16384);
  BOOST_REQUIRE_MESSAGE(created.ok(), created.ToString());
  // Like the driver, the new vHCU shows up as /etc/vdev/vdevN.conf.
  BOOST_REQUIRE(testing::PathExists(node.host_root() + "/etc/vdev/vdev0.conf"));
  StatusOr<DmiDeviceInfo> info = lib->VhcuInfo(0);
  BOOST_REQUIRE(info.ok());
  BOOST_CHECK_EQUAL(info->parent_card, 1);
  BOOST_CHECK_EQUAL(info->compute_units, 30);
  BOOST_CHECK(lib->StopVhcu(0).ok());
  const Status destroyed = lib->DestroyVhcu(0);
  BOOST_REQUIRE_MESSAGE(destroyed.ok(), destroyed.ToString());
  BOOST_CHECK(lib->VhcuInfo(0).status().code() == StatusCode::kNotFound);
  BOOST_CHECK(node.sleeps_ms().empty());
}

BOOST_AUTO_TEST_CASE(RejectsAVhcuLargerThanTheCard) {
  StubNode node(K100());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  const Status st = lib->CreateVhcu(0, 500, 1024);
  BOOST_CHECK(!st.ok());
  BOOST_CHECK_MESSAGE(st.message().find("dmiCreateVDevices") != std::string::npos, st.message());
}

// Issue 10.6: the VhcuManager's queue owns destroy retries; the library
// tries once and never sleeps (it used to back off ~5 s under the callers'
// locks).
BOOST_AUTO_TEST_CASE(ABusyDestroyIsOneAttemptAnsweredUnavailableWithoutSleeping) {
  StubNode node(K100());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  BOOST_REQUIRE(lib->CreateVhcu(0, 10, 4096).ok());
  node.Control("destroy_busy=1\n");
  const Status st = lib->DestroyVhcu(0);
  BOOST_CHECK(st.code() == StatusCode::kUnavailable);
  BOOST_CHECK_MESSAGE(st.message().find("busy") != std::string::npos, st.message());
  BOOST_CHECK(node.sleeps_ms().empty());
  BOOST_CHECK(lib->VhcuInfo(0).ok());     // still there
  BOOST_CHECK(lib->DestroyVhcu(0).ok());  // the next attempt (the caller's retry) succeeds
}

BOOST_AUTO_TEST_CASE(CreateReportsTheIdOfTheVhcuItMade) {
  StubNode node(K100());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  BOOST_REQUIRE(lib->CreateVhcu(0, 10, 4096).ok());  // vdev0
  int id = -1;
  const Status st = lib->CreateVhcu(1, 12, 1024, &id);
  BOOST_REQUIRE_MESSAGE(st.ok(), st.ToString());
  BOOST_CHECK_EQUAL(id, 1);
}

// A vdev<N>.conf outlives its vHCU when the plugin is killed between the
// destroy and the unlink (or a vendor tool leaves it). The driver gives N
// out again, on the same card and of the same size: the conf looks unchanged,
// yet it is the new vHCU.
BOOST_AUTO_TEST_CASE(CreateFindsItsVhcuWhenTheDriverReusesTheIdOfAStaleConf) {
  StubNode node(K100());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  int first = -1;
  BOOST_REQUIRE(lib->CreateVhcu(1, 30, 16384, &first).ok());
  BOOST_REQUIRE_EQUAL(first, 0);
  node.Control("stale_vdev=0\n");  // destroyed by the driver, its conf left behind
  BOOST_REQUIRE(testing::PathExists(node.host_root() + "/etc/vdev/vdev0.conf"));
  BOOST_REQUIRE(lib->VhcuInfo(0).status().code() == StatusCode::kNotFound);
  int id = -1;
  const Status st = lib->CreateVhcu(1, 30, 16384, &id);
  BOOST_REQUIRE_MESSAGE(st.ok(), st.ToString());
  BOOST_CHECK_EQUAL(id, 0);
  BOOST_CHECK(lib->VhcuInfo(0).ok());
}

// A stale conf the driver does not reuse stays stale: it is not a second
// candidate next to the vHCU the create made.
BOOST_AUTO_TEST_CASE(CreateIgnoresAStaleConfOfThatCardAndSizeTheDriverDidNotReuse) {
  StubNode node(K100());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  BOOST_REQUIRE(lib->CreateVhcu(1, 30, 16384).ok());  // vdev0
  BOOST_REQUIRE(lib->CreateVhcu(1, 30, 16384).ok());  // vdev1
  node.Control("stale_vdev=1\n");
  BOOST_REQUIRE(lib->DestroyVhcu(0).ok());  // id 0 is free again: the driver takes it first
  int id = -1;
  const Status st = lib->CreateVhcu(1, 30, 16384, &id);
  BOOST_REQUIRE_MESSAGE(st.ok(), st.ToString());
  BOOST_CHECK_EQUAL(id, 0);
  BOOST_CHECK(testing::PathExists(node.host_root() + "/etc/vdev/vdev1.conf"));
  BOOST_CHECK(lib->VhcuInfo(1).status().code() == StatusCode::kNotFound);
}

BOOST_AUTO_TEST_CASE(ReportsMigModeFromTheMigLibrary) {
  StubNode mig(SourcePath("demo/nodes/bw-mig.yaml"));
  StatusOr<bool> on = OpenAndInit(mig)->MigEnabled();
  BOOST_REQUIRE(on.ok());
  BOOST_CHECK(*on);
  StubNode plain(K100());
  StatusOr<bool> off = OpenAndInit(plain)->MigEnabled();
  BOOST_REQUIRE(off.ok());
  BOOST_CHECK(!*off);
}

BOOST_AUTO_TEST_CASE(MigIsOffWhenTheMigLibraryIsAbsent) {
  StubNode node(SourcePath("demo/nodes/bw-mig.yaml"));
  TempDir dir;
  const std::string lib = StubNode::StubHyhal() + "/lib/";
  DlopenVendorLibOptions o = node.Options();
  o.hyhal_path = LibDirWith(dir, {{lib + "librocm_smi64.so.2", "librocm_smi64.so.2"},
                                  {lib + "libhydmi.so.1", "libhydmi.so.1"}});
  std::unique_ptr<VendorLib> vendor = Open(o);
  BOOST_REQUIRE(vendor->Init().ok());
  StatusOr<bool> on = vendor->MigEnabled();
  BOOST_REQUIRE(on.ok());
  BOOST_CHECK(!*on);
}

BOOST_AUTO_TEST_CASE(KeepsRsmiInitAndShutdownBalanced) {
  StubNode node(K100());
  {
    std::unique_ptr<VendorLib> lib = Open(node.Options());
    BOOST_CHECK_EQUAL(node.RsmiRefcount(), 0);
    BOOST_REQUIRE(lib->Init().ok());
    BOOST_REQUIRE(lib->Init().ok());  // idempotent
    BOOST_CHECK_EQUAL(node.RsmiRefcount(), 1);
    lib->Shutdown();
    BOOST_CHECK_EQUAL(node.RsmiRefcount(), 0);
    lib->Shutdown();  // no double shutdown
    BOOST_CHECK_EQUAL(node.RsmiRefcount(), 0);
    BOOST_REQUIRE(lib->Init().ok());
    BOOST_CHECK_EQUAL(node.RsmiRefcount(), 1);
  }
  BOOST_CHECK_EQUAL(node.RsmiRefcount(), 0);  // destruction shuts down
}

BOOST_AUTO_TEST_CASE(RsmiCallsBeforeInitAreAFailedPrecondition) {
  StubNode node(K100());
  std::unique_ptr<VendorLib> lib = Open(node.Options());
  BOOST_CHECK(lib->CardCount().status().code() == StatusCode::kFailedPrecondition);
  BOOST_CHECK(lib->QueryHealth().status().code() == StatusCode::kFailedPrecondition);
}

BOOST_AUTO_TEST_CASE(RetriesRsmiInitThenSucceeds) {
  StubNode node(K100());
  node.Control("rsmi_init_failures=2\n");
  std::unique_ptr<VendorLib> lib = Open(node.Options());
  const Status st = lib->Init();
  BOOST_REQUIRE_MESSAGE(st.ok(), st.ToString());
  BOOST_CHECK_EQUAL(node.sleeps_ms().size(), 2u);
  BOOST_CHECK_EQUAL(node.RsmiRefcount(), 1);
}

BOOST_AUTO_TEST_CASE(RsmiInitFailureIsAClearErrorAfterBoundedRetries) {
  StubNode node(K100());
  node.Control("rsmi_init_failures=-1\n");
  std::unique_ptr<VendorLib> lib = Open(node.Options());
  const Status st = lib->Init();
  BOOST_REQUIRE(!st.ok());
  BOOST_CHECK_MESSAGE(st.message().find("rsmi_init") != std::string::npos, st.message());
  BOOST_CHECK_MESSAGE(st.message().find("RSMI_STATUS_INIT_ERROR") != std::string::npos,
                      st.message());
  BOOST_CHECK_MESSAGE(st.message().find("3 attempts") != std::string::npos, st.message());
  BOOST_CHECK_EQUAL(node.sleeps_ms().size(), 2u);
  BOOST_CHECK_EQUAL(node.RsmiRefcount(), 0);
  BOOST_CHECK(lib->CardCount().status().code() == StatusCode::kFailedPrecondition);
}

BOOST_AUTO_TEST_CASE(DriverNeverLiveGivesAClearErrorAfterABoundedWait) {
  StubNode node(K100());
  WriteFile(node.host_root() + "/sys/module/hycu/initstate", "coming\n");
  std::unique_ptr<VendorLib> lib = Open(node.Options());
  StatusOr<bool> live = lib->DriverLive();
  BOOST_REQUIRE(live.ok());
  BOOST_CHECK(!*live);
  const Status st = lib->Init();
  BOOST_CHECK(st.code() == StatusCode::kFailedPrecondition);
  BOOST_CHECK_MESSAGE(st.message().find("\"coming\"") != std::string::npos, st.message());
  BOOST_CHECK((node.sleeps_ms() == std::vector<int>{10000, 10000}));
  BOOST_CHECK_EQUAL(node.RsmiRefcount(), 0);  // never touched the library
}

BOOST_AUTO_TEST_CASE(WaitsForTheDriverToBecomeLive) {
  StubNode node(K100());
  const std::string initstate = node.host_root() + "/sys/module/hycu/initstate";
  WriteFile(initstate, "coming\n");
  DlopenVendorLibOptions o = node.Options();
  int waits = 0;
  o.sleep = [&](std::chrono::milliseconds) {
    if (++waits == 2) WriteFile(initstate, "live\n");
  };
  std::unique_ptr<VendorLib> lib = Open(o);
  const Status st = lib->Init();
  BOOST_CHECK_MESSAGE(st.ok(), st.ToString());
  BOOST_CHECK_EQUAL(waits, 2);
}

BOOST_AUTO_TEST_CASE(ReadsTheDriverVersionFromTheModule) {
  StubNode node(K100());
  std::unique_ptr<VendorLib> lib = OpenAndInit(node);
  StatusOr<std::string> v = lib->DriverVersion();
  BOOST_REQUIRE(v.ok());
  BOOST_CHECK_EQUAL(*v, "6.3.27-V1.2.5");
}

BOOST_AUTO_TEST_CASE(MissingLibraryIsNamed) {
  TempDir dir;
  const std::string lib = StubNode::StubHyhal() + "/lib/";
  DlopenVendorLibOptions o;
  o.hyhal_path = LibDirWith(dir, {{lib + "librocm_smi64.so.2", "librocm_smi64.so.2"}});
  StatusOr<std::unique_ptr<VendorLib>> got = NewDlopenVendorLib(o);
  BOOST_REQUIRE(!got.ok());
  BOOST_CHECK(got.status().code() == StatusCode::kNotFound);
  BOOST_CHECK_MESSAGE(got.status().message().find("libhydmi.so.1") != std::string::npos,
                      got.status().message());
}

BOOST_AUTO_TEST_CASE(EmptyHyhalDirectoryNamesTheFirstLibrary) {
  TempDir dir;
  DlopenVendorLibOptions o;
  o.hyhal_path = dir.path();
  StatusOr<std::unique_ptr<VendorLib>> got = NewDlopenVendorLib(o);
  BOOST_REQUIRE(!got.ok());
  BOOST_CHECK(got.status().message().find("librocm_smi64.so.2") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(MissingRequiredSymbolIsNamedWithItsLibrary) {
  TempDir dir;
  const std::string lib = StubNode::StubHyhal() + "/lib/";
  DlopenVendorLibOptions o;
  o.hyhal_path = LibDirWith(
      dir, {{StubNode::StubVariants() + "/missing_symbol/librocm_smi64.so.2", "librocm_smi64.so.2"},
            {lib + "libhydmi.so.1", "libhydmi.so.1"}});
  StatusOr<std::unique_ptr<VendorLib>> got = NewDlopenVendorLib(o);
  BOOST_REQUIRE(!got.ok());
  BOOST_CHECK_MESSAGE(
      got.status().message().find("missing symbol rsmi_dev_ecc_count_get") != std::string::npos,
      got.status().message());
  BOOST_CHECK_MESSAGE(got.status().message().find("librocm_smi64.so.2") != std::string::npos,
                      got.status().message());
}

BOOST_AUTO_TEST_CASE(WrongSonameIsReportedAsUnsupported) {
  TempDir dir;
  const std::string lib = StubNode::StubHyhal() + "/lib/";
  DlopenVendorLibOptions o;
  o.hyhal_path = LibDirWith(dir, {{lib + "librocm_smi64.so.2", "librocm_smi64.so.3"},
                                  {lib + "libhydmi.so.1", "libhydmi.so.1"}});
  StatusOr<std::unique_ptr<VendorLib>> got = NewDlopenVendorLib(o);
  BOOST_REQUIRE(!got.ok());
  BOOST_CHECK(got.status().code() == StatusCode::kNotFound);
  BOOST_CHECK_MESSAGE(
      got.status().message().find("found only librocm_smi64.so.3") != std::string::npos,
      got.status().message());
}

BOOST_AUTO_TEST_CASE(FileThatIsNotALibraryFailsToLoadWithTheLoadersReason) {
  TempDir dir;
  WriteFile(dir.Join("hyhal/lib/librocm_smi64.so.2"), "not an ELF file\n");
  DlopenVendorLibOptions o;
  o.hyhal_path = dir.Join("hyhal");
  StatusOr<std::unique_ptr<VendorLib>> got = NewDlopenVendorLib(o);
  BOOST_REQUIRE(!got.ok());
  BOOST_CHECK(got.status().code() == StatusCode::kFailedPrecondition);
  BOOST_CHECK(got.status().message().find("librocm_smi64.so.2") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(LoadingAStandInLibraryRendersItsNode) {
  // As on a real node, the driver's files exist once the vendor libraries
  // can be loaded: an empty host-root needs no separate render step.
  TempDir dir;
  const std::string root = dir.Join("root");
  testing::RunResult r = testing::Run(
      {StubNode::StubVariants() + "/../dlopen_probe", StubNode::StubHyhal() + "/lib/libhydmi.so.1"},
      {"HCUDP_STUB_SIM_NODE=" + K100(), "HCUDP_STUB_HOST_ROOT=" + root});
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  BOOST_CHECK_EQUAL(testing::ReadFile(root + "/sys/module/hycu/initstate"), "live\n");
  BOOST_CHECK(testing::PathExists(root + "/dev/kfd"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
