#include <atomic>
#include <boost/test/unit_test.hpp>
#include <set>
#include <thread>

#include "hcudp/sim_node.h"
#include "hcudp/vdev_conf.h"
#include "testing/testutil.h"

namespace hcudp {
namespace {

using testing::PathExists;
using testing::ReadFile;

bool Is(const Status& s, StatusCode code) { return s.code() == code; }

// A SimNode file copied into a temp dir (so tests can edit it) and a
// SimVendorLib over it, rendered under <dir>/root.
struct SimFixture {
  explicit SimFixture(const std::string& relative)
      : yaml(dir.Join("node.yaml")), root(dir.Join("root")) {
    testing::WriteFile(yaml, ReadFile(testing::SourcePath(relative)));
    lib = Open();
  }
  std::unique_ptr<VendorLib> Open() {
    StatusOr<std::unique_ptr<VendorLib>> l = NewSimVendorLib(yaml, root);
    BOOST_REQUIRE_MESSAGE(l.ok(), l.status().ToString());
    BOOST_REQUIRE(l.value()->Init().ok());
    return std::move(l).value();
  }
  // Rewrites the SimNode file with one substitution (via rename: a new inode,
  // so the change is seen whatever the timestamp granularity).
  void Edit(const std::string& from, const std::string& to) {
    std::string text = ReadFile(yaml);
    size_t pos = text.find(from);
    BOOST_REQUIRE_MESSAGE(pos != std::string::npos, from);
    text.replace(pos, from.size(), to);
    testing::WriteFile(yaml + ".new", text);
    BOOST_REQUIRE(std::rename((yaml + ".new").c_str(), yaml.c_str()) == 0);
  }
  testing::TempDir dir;
  std::string yaml;
  std::string root;
  std::unique_ptr<VendorLib> lib;
};

BOOST_AUTO_TEST_SUITE(sim_vendor_lib)

BOOST_AUTO_TEST_CASE(answers_card_questions_from_the_simnode) {
  SimFixture f("demo/nodes/k100ai-8.yaml");
  VendorLib& lib = *f.lib;
  BOOST_TEST(*lib.CardCount() == 8);
  BOOST_TEST(*lib.PciBdf(2) == "0000:49:00.0");
  BOOST_TEST(*lib.Serial(0) == "T6T8290019020401");
  BOOST_TEST(*lib.PciDeviceId(7) == 0x6210);
  BOOST_TEST(*lib.MemoryTotalBytes(0) == 65520ull * kMiB);
  BOOST_TEST(*lib.NumaNode(5) == 5);
  BOOST_TEST(*lib.DriverVersion() == "6.3.27-V1.2.5");
  BOOST_TEST(*lib.DriverLive());
  // No ECC errors and no unhealthy verdict: card 1 reports healthy.
  StatusOr<std::vector<CardHealthReport>> health = lib.QueryHealth();
  BOOST_REQUIRE(health.ok());
  bool card1_healthy = false;
  for (const CardHealthReport& r : *health) {
    if (r.bdf == *lib.PciBdf(1)) card1_healthy = r.health == Health::kHealthy;
  }
  BOOST_TEST(card1_healthy);
  BOOST_TEST(*lib.UniqueId(1) != *lib.UniqueId(0));
  BOOST_TEST(*lib.UniqueId(1) == *f.Open()->UniqueId(1));
  StatusOr<DmiDeviceInfo> info = lib.DeviceInfo(3);
  BOOST_REQUIRE(info.ok());
  BOOST_TEST(info->name == "K100_AI");
  BOOST_TEST(info->compute_units == 120);
  BOOST_TEST(info->global_memory_bytes == 65520ull * kMiB);
  BOOST_TEST(*lib.MaxVhcusPerCard() == 4);
  BOOST_TEST(!*lib.MigEnabled());
  BOOST_TEST(Is(lib.PciBdf(8).status(), StatusCode::kNotFound));
  BOOST_TEST(Is(lib.Serial(-1).status(), StatusCode::kNotFound));
  BOOST_REQUIRE(lib.WatchPaths().size() == 1u);
  BOOST_TEST(lib.WatchPaths()[0] == f.yaml);
}

BOOST_AUTO_TEST_CASE(links_come_from_default_and_symmetric_pairs) {
  SimFixture f("demo/nodes/z100l-mixed.yaml");
  StatusOr<RsmiLink> near = f.lib->LinkBetween(1, 0);
  BOOST_REQUIRE(near.ok());
  BOOST_TEST((near->type == LinkType::kPcie));
  BOOST_TEST(near->hops == 2);
  BOOST_TEST(near->weight == 40);
  BOOST_TEST(near->up_links == 0);
  BOOST_TEST(f.lib->LinkBetween(0, 2)->weight == 72);
  BOOST_TEST(!f.lib->LinkBetween(0, 0).ok());
  BOOST_TEST(!f.lib->LinkBetween(0, 4).ok());
  SimFixture hsl("demo/nodes/k100ai-8.yaml");
  StatusOr<RsmiLink> mesh = hsl.lib->LinkBetween(0, 7);
  BOOST_REQUIRE(mesh.ok());
  BOOST_TEST((mesh->type == LinkType::kHsl));
  BOOST_TEST(mesh->up_links == 1);
  BOOST_TEST(mesh->weight == 15);
}

BOOST_AUTO_TEST_CASE(seeded_vhcus_are_visible_with_remaining_capacity) {
  SimFixture f("demo/nodes/z100l-mixed.yaml");
  StatusOr<DmiDeviceInfo> v4 = f.lib->VhcuInfo(4);
  BOOST_REQUIRE(v4.ok());
  BOOST_TEST(v4->compute_units == 30);
  BOOST_TEST(v4->global_memory_bytes == 16376ull * kMiB);
  BOOST_TEST(v4->parent_card == 3);
  BOOST_TEST(Is(f.lib->VhcuInfo(6).status(), StatusCode::kNotFound));
  BOOST_TEST(f.lib->Remaining(0)->compute_units == 60);
  BOOST_TEST(f.lib->Remaining(0)->memory_bytes == 34342961152ull);
  BOOST_TEST(f.lib->Remaining(2)->compute_units == 0);
  BOOST_TEST(f.lib->Remaining(3)->memory_bytes == 0u);
}

BOOST_AUTO_TEST_CASE(create_takes_lowest_free_id_pipe_and_cus) {
  SimFixture f("demo/nodes/z100l-mixed.yaml");
  BOOST_REQUIRE(f.lib->DestroyVhcu(1).ok());  // frees id 1, pipe 1, CUs 15..29 of card 2
  BOOST_REQUIRE(f.lib->CreateVhcu(2, 10, 4000).ok());
  StatusOr<VdevConf> conf = ParseVdevConf(ReadFile(f.root + "/etc/vdev/vdev1.conf"));
  BOOST_REQUIRE(conf.ok());
  BOOST_TEST(conf->vdev_id == 1);
  BOOST_TEST(conf->device_id == 2);
  BOOST_TEST(conf->pci_bus_id == "0000:8b:00.0");
  BOOST_TEST(conf->pipe_id == 1);
  BOOST_TEST(conf->cu_mask_lo == 0x1ff8000ull);  // CUs 15..24
  BOOST_TEST(conf->mem_mib == 4000u);
  BOOST_TEST(f.lib->Remaining(2)->compute_units == 5);
  // The next vHCU on a whole card gets id 6, pipe 0 and CUs from 0.
  BOOST_REQUIRE(f.lib->CreateVhcu(0, 60, 32752).ok());
  StatusOr<VdevConf> v6 = ParseVdevConf(ReadFile(f.root + "/etc/vdev/vdev6.conf"));
  BOOST_REQUIRE(v6.ok());
  BOOST_TEST(v6->pipe_id == 0);
  BOOST_TEST(v6->cu_mask_lo == 0x0fffffffffffffffull);
}

BOOST_AUTO_TEST_CASE(create_enforces_count_cu_and_memory_limits) {
  SimFixture f("demo/nodes/z100l-mixed.yaml");
  Status full = f.lib->CreateVhcu(2, 1, 1);  // card 2 has 4 vHCUs already
  BOOST_TEST(Is(full, StatusCode::kResourceExhausted));
  BOOST_TEST(full.message().find("4 vHCUs") != std::string::npos, full.message());
  Status cus = f.lib->CreateVhcu(0, 61, 1);
  BOOST_TEST(Is(cus, StatusCode::kResourceExhausted));
  BOOST_TEST(cus.message().find("CUs") != std::string::npos, cus.message());
  Status mem = f.lib->CreateVhcu(0, 1, 32753);
  BOOST_TEST(Is(mem, StatusCode::kResourceExhausted));
  BOOST_TEST(mem.message().find("MiB") != std::string::npos, mem.message());
  BOOST_TEST(Is(f.lib->CreateVhcu(0, 0, 100), StatusCode::kInvalidArgument));
  BOOST_TEST(Is(f.lib->CreateVhcu(0, 1, 0), StatusCode::kInvalidArgument));
  BOOST_TEST(Is(f.lib->CreateVhcu(9, 1, 1), StatusCode::kInvalidArgument));
  BOOST_TEST(!PathExists(f.root + "/etc/vdev/vdev6.conf"));
}

BOOST_AUTO_TEST_CASE(create_is_refused_in_mig_mode) {
  SimFixture f("demo/nodes/bw-mig.yaml");
  BOOST_TEST(*f.lib->MigEnabled());
  BOOST_TEST(Is(f.lib->CreateVhcu(3, 20, 1000), StatusCode::kFailedPrecondition));
}

BOOST_AUTO_TEST_CASE(concurrent_creates_from_two_libraries_respect_the_limit) {
  // Two libraries on one host-root stand for hcuctl and the daemon: only the
  // flock keeps them from handing out one id twice or exceeding the count.
  SimFixture f("demo/nodes/k100ai-8.yaml");
  std::unique_ptr<VendorLib> other = f.Open();
  std::atomic<int> created{0};
  auto worker = [&](VendorLib* lib) {
    for (int i = 0; i < 4; ++i) {
      if (lib->CreateVhcu(0, 10, 1000).ok()) ++created;
    }
  };
  std::thread a(worker, f.lib.get());
  std::thread b(worker, other.get());
  a.join();
  b.join();
  BOOST_TEST(created.load() == 4);
  std::set<uint64_t> pipes;
  for (int id = 0; id < 4; ++id) {
    StatusOr<VdevConf> conf =
        ParseVdevConf(ReadFile(f.root + "/etc/vdev/vdev" + std::to_string(id) + ".conf"));
    BOOST_REQUIRE(conf.ok());
    pipes.insert(conf->pipe_id);
    pipes.insert(100 + conf->cu_mask_lo);
  }
  BOOST_TEST(pipes.size() == 8u);  // distinct pipe ids and distinct masks
  BOOST_TEST(f.lib->Remaining(0)->compute_units == 80);
}

BOOST_AUTO_TEST_CASE(stop_and_destroy_report_missing_vhcus) {
  SimFixture f("demo/nodes/z100l-mixed.yaml");
  BOOST_TEST(f.lib->StopVhcu(3).ok());
  BOOST_TEST(f.lib->DestroyVhcu(3).ok());
  BOOST_TEST(!PathExists(f.root + "/etc/vdev/vdev3.conf"));
  BOOST_TEST(Is(f.lib->StopVhcu(3), StatusCode::kNotFound));
  BOOST_TEST(Is(f.lib->DestroyVhcu(3), StatusCode::kNotFound));
  BOOST_TEST(Is(f.lib->VhcuInfo(3).status(), StatusCode::kNotFound));
}

BOOST_AUTO_TEST_CASE(vhcu_state_survives_a_new_library_and_rerender) {
  SimFixture f("demo/nodes/z100l-mixed.yaml");
  BOOST_REQUIRE(f.lib->DestroyVhcu(5).ok());
  BOOST_REQUIRE(f.lib->CreateVhcu(0, 20, 1024).ok());  // id 5 again, on card 0
  BOOST_REQUIRE(f.lib->DestroyVhcu(0).ok());
  std::unique_ptr<VendorLib> reopened = f.Open();  // renders again
  BOOST_TEST(Is(reopened->VhcuInfo(0).status(), StatusCode::kNotFound));
  StatusOr<DmiDeviceInfo> v5 = reopened->VhcuInfo(5);
  BOOST_REQUIRE(v5.ok());
  BOOST_TEST(v5->parent_card == 0);
  BOOST_TEST(v5->compute_units == 20);
  f.Edit("name: hcu-z100l-mixed", "name: renamed");  // a YAML edit re-renders
  BOOST_TEST(*reopened->CardCount() == 4);
  BOOST_TEST(Is(reopened->VhcuInfo(0).status(), StatusCode::kNotFound));
}

BOOST_AUTO_TEST_CASE(health_edit_is_seen_by_query_health) {
  SimFixture f("demo/nodes/k100ai-8.yaml");
  StatusOr<std::vector<CardHealthReport>> before = f.lib->QueryHealth();
  BOOST_REQUIRE(before.ok());
  BOOST_REQUIRE(before->size() == 8u);
  for (const CardHealthReport& r : *before) BOOST_TEST((r.health == Health::kHealthy));
  f.Edit(
      "serial: T6T8290017030301\n    computeUnits: 120\n    memoryMiB: 65520\n    numaNode: 2\n"
      "    cardMinor: 3                # /dev/dri/card3\n"
      "    renderMinor: 130            # /dev/dri/renderD130\n    health: Healthy",
      "serial: T6T8290017030301\n    computeUnits: 120\n    memoryMiB: 65520\n    numaNode: 2\n"
      "    cardMinor: 3                # /dev/dri/card3\n"
      "    renderMinor: 130            # /dev/dri/renderD130\n    health: Unhealthy");
  StatusOr<std::vector<CardHealthReport>> after = f.lib->QueryHealth();
  BOOST_REQUIRE(after.ok());
  BOOST_TEST((after->at(2).health == Health::kUnhealthy));
  BOOST_TEST(after->at(2).bdf == "0000:49:00.0");
  BOOST_TEST(after->at(2).reason == "SimNode health: Unhealthy");
  BOOST_TEST((after->at(1).health == Health::kHealthy));
  BOOST_TEST(after->at(1).reason.empty());
}

BOOST_AUTO_TEST_CASE(invalid_edit_keeps_the_last_good_state) {
  SimFixture f("demo/nodes/k100ai-8.yaml");
  f.Edit("driverVersion: 6.3.27-V1.2.5", "driverVersion: 6.3.28");
  BOOST_TEST(*f.lib->DriverVersion() == "6.3.28");
  f.Edit("memoryMiB: 65520", "memoryMiB: -1");
  BOOST_TEST(*f.lib->DriverVersion() == "6.3.28");
  BOOST_TEST(*f.lib->MemoryTotalBytes(0) == 65520ull * kMiB);
  BOOST_TEST(ReadFile(f.root + "/sys/module/hycu/version") == "6.3.28\n");
  f.Edit("memoryMiB: -1", "memoryMiB: 65520");
  f.Edit("driverVersion: 6.3.28", "driverVersion: 6.3.29");
  BOOST_TEST(*f.lib->DriverVersion() == "6.3.29");
}

BOOST_AUTO_TEST_CASE(disabling_mig_in_the_yaml_removes_the_mig_confs) {
  SimFixture f("demo/nodes/bw-mig.yaml");
  f.Edit("  enabled: true", "  enabled: false");
  BOOST_TEST(!*f.lib->MigEnabled());
  BOOST_TEST(!PathExists(f.root + "/etc/dmi_mig_config/ci"));
}

BOOST_AUTO_TEST_CASE(invalid_file_at_start_is_an_error) {
  testing::TempDir dir;
  testing::WriteFile(dir.Join("bad.yaml"), "kind: SimNode\n");
  StatusOr<std::unique_ptr<VendorLib>> lib = NewSimVendorLib(dir.Join("bad.yaml"), dir.Join("r"));
  BOOST_TEST(!lib.ok());
  BOOST_TEST(!NewSimVendorLib(testing::SourcePath("demo/nodes/k100ai-8.yaml"), "/").ok());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
