#include "hcudp/vdev_conf.h"

#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "testing/testutil.h"

namespace hcudp {
namespace {

using testing::ReplaceFirst;

// vdev4 of fixture node B (hcu-hardware.md §6.2).
constexpr char kVdev4[] =
    "PciBusId: 0000:8e:00.0\n"
    "cu_mask: 0x000000003fffffff\n"
    "cu_mask: 0x0000000000000000\n"
    "cu_count: 30\n"
    "mem: 16376 MiB\n"
    "device_id: 3\n"
    "vdev_id: 4\n"
    "pipe_id: 0\n"
    "enable: 1\n";

BOOST_AUTO_TEST_SUITE(vdev_conf)

BOOST_AUTO_TEST_CASE(parses_reference_example) {
  StatusOr<VdevConf> conf = ParseVdevConf(kVdev4);
  BOOST_REQUIRE_MESSAGE(conf.ok(), conf.status().ToString());
  BOOST_TEST(conf->pci_bus_id == "0000:8e:00.0");
  BOOST_TEST(conf->cu_mask_lo == 0x3fffffffull);
  BOOST_TEST(conf->cu_mask_hi == 0u);
  BOOST_TEST(conf->cu_count == 30);
  BOOST_TEST(conf->mem_mib == 16376u);
  BOOST_TEST(conf->device_id == 3);
  BOOST_TEST(conf->vdev_id == 4);
  BOOST_TEST(conf->pipe_id == 0);
  BOOST_TEST(conf->enable == 1);
}

BOOST_AUTO_TEST_CASE(format_reproduces_reference_text_byte_for_byte) {
  StatusOr<VdevConf> conf = ParseVdevConf(kVdev4);
  BOOST_REQUIRE(conf.ok());
  BOOST_TEST(FormatVdevConf(*conf) == kVdev4);
}

BOOST_AUTO_TEST_CASE(round_trips_the_section_3_3_example) {
  constexpr char kVdev0[] =
      "PciBusId: 0000:8b:00.0\ncu_mask: 0x0000000000007fff\ncu_mask: 0x0000000000000000\n"
      "cu_count: 15\nmem: 8188 MiB\ndevice_id: 2\nvdev_id: 0\npipe_id: 0\nenable: 1\n";
  StatusOr<VdevConf> conf = ParseVdevConf(kVdev0);
  BOOST_REQUIRE_MESSAGE(conf.ok(), conf.status().ToString());
  BOOST_TEST(conf->cu_count == 15);
  BOOST_TEST(conf->mem_mib == 8188u);
  BOOST_TEST(FormatVdevConf(*conf) == kVdev0);
}

BOOST_AUTO_TEST_CASE(keys_may_come_in_any_order) {
  std::string text =
      "vdev_id: 4\nenable: 1\nPciBusId: 0000:8e:00.0\ncu_mask: 0x3fffffff\ncu_mask: 0x0\n"
      "cu_count: 30\nmem: 16376 MiB\ndevice_id: 3\npipe_id: 0\n";
  StatusOr<VdevConf> conf = ParseVdevConf(text);
  BOOST_REQUIRE_MESSAGE(conf.ok(), conf.status().ToString());
  BOOST_TEST(FormatVdevConf(*conf) == kVdev4);
}

BOOST_AUTO_TEST_CASE(high_mask_word_counts_towards_cu_count) {
  std::string text = ReplaceFirst(
      ReplaceFirst(kVdev4, "cu_mask: 0x0000000000000000", "cu_mask: 0x0000000000000003"),
      "cu_count: 30", "cu_count: 32");
  StatusOr<VdevConf> conf = ParseVdevConf(text);
  BOOST_REQUIRE_MESSAGE(conf.ok(), conf.status().ToString());
  BOOST_TEST(conf->cu_mask_hi == 3u);
}

struct BadCase {
  const char* name;
  std::string text;
  const char* expect;  // substring of the error
};

std::ostream& operator<<(std::ostream& os, const BadCase& c) { return os << c.name; }

const BadCase kBad[] = {
    {"empty file", "", "empty"},
    {"blank lines only", "\n\n", "empty"},
    {"cu_count vs mask", ReplaceFirst(kVdev4, "cu_count: 30", "cu_count: 16"), "cu_count 16"},
    {"unknown key", std::string(kVdev4) + "color: red\n", "line 10: unknown key \"color\""},
    {"duplicate key", std::string(kVdev4) + "pipe_id: 1\n", "line 10: duplicate key \"pipe_id\""},
    {"third cu_mask", std::string(kVdev4) + "cu_mask: 0x0\n", "duplicate key \"cu_mask\""},
    {"missing key", ReplaceFirst(kVdev4, "enable: 1\n", ""), "missing key \"enable\""},
    {"one cu_mask", ReplaceFirst(kVdev4, "cu_mask: 0x0000000000000000\n", ""), "cu_mask"},
    {"no colon", ReplaceFirst(kVdev4, "enable: 1", "enable 1"), "line 9: expected"},
    {"bad bdf", ReplaceFirst(kVdev4, "0000:8e:00.0", "0000:8E:00.0"), "line 1: PciBusId"},
    {"bad mask", ReplaceFirst(kVdev4, "0x000000003fffffff", "3fffffff"), "line 2: cu_mask"},
    {"mask too wide", ReplaceFirst(kVdev4, "0x000000003fffffff", "0x1000000003fffffff"), "line 2"},
    {"mem without unit", ReplaceFirst(kVdev4, "16376 MiB", "16376"), "line 5: mem"},
    {"mem zero", ReplaceFirst(kVdev4, "16376 MiB", "0 MiB"), "line 5: mem"},
    {"negative device", ReplaceFirst(kVdev4, "device_id: 3", "device_id: -3"), "line 6: device_id"},
    {"pipe out of range", ReplaceFirst(kVdev4, "pipe_id: 0", "pipe_id: 20"), "line 8: pipe_id"},
    {"enable 2", ReplaceFirst(kVdev4, "enable: 1", "enable: 2"), "line 9: enable"},
    {"number with junk", ReplaceFirst(kVdev4, "vdev_id: 4", "vdev_id: 4x"), "line 7: vdev_id"},
    {"huge number", ReplaceFirst(kVdev4, "vdev_id: 4", "vdev_id: 99999999999999999999"), "line 7"},
    {"binary",
     std::string("\x7f"
                 "ELF\x01\x02\0\0",
                 8),
     "line 1"},
};

BOOST_DATA_TEST_CASE(rejects_malformed_conf_naming_the_problem, boost::unit_test::data::make(kBad),
                     bad) {
  StatusOr<VdevConf> conf = ParseVdevConf(bad.text);
  BOOST_REQUIRE(!conf.ok());
  BOOST_TEST(static_cast<int>(conf.status().code()) ==
             static_cast<int>(StatusCode::kInvalidArgument));
  BOOST_TEST(conf.status().message().find(bad.expect) != std::string::npos,
             conf.status().message());
}

BOOST_AUTO_TEST_CASE(vdev_id_must_match_file_name) {
  // Negative fixture of §6.2: vdev6.conf containing vdev_id 5.
  StatusOr<VdevConf> conf = ParseVdevConf(ReplaceFirst(kVdev4, "vdev_id: 4", "vdev_id: 5"));
  BOOST_REQUIRE(conf.ok());
  BOOST_TEST(CheckVdevConfName(*conf, 5).ok());
  Status s = CheckVdevConfName(*conf, 6);
  BOOST_TEST(!s.ok());
  BOOST_TEST(s.message().find("vdev6.conf has vdev_id 5") != std::string::npos, s.message());
}

BOOST_AUTO_TEST_CASE(duplicate_pipe_id_on_one_card_is_rejected) {
  VdevConf a{"0000:8b:00.0", 0x7fff, 0, 15, 8188, 2, 0, 0, 1};
  VdevConf b = a;
  b.vdev_id = 1;
  b.cu_mask_lo = 0x3fff8000;
  VdevConf other_card = a;
  other_card.pci_bus_id = "0000:8e:00.0";
  other_card.vdev_id = 4;
  BOOST_TEST(CheckPipeIdsUnique({a, other_card}).ok());
  Status s = CheckPipeIdsUnique({a, other_card, b});
  BOOST_TEST(!s.ok());
  BOOST_TEST(s.message().find("pipe_id 0") != std::string::npos, s.message());
  b.pipe_id = 1;
  BOOST_TEST(CheckPipeIdsUnique({a, other_card, b}).ok());
}

BOOST_AUTO_TEST_CASE(file_name_gives_index) {
  BOOST_TEST(*ParseVdevConfFileName("vdev0.conf") == 0);
  BOOST_TEST(*ParseVdevConfFileName("vdev17.conf") == 17);
  for (const char* bad : {"vdev.conf", "vdev01.conf", "vdev-1.conf", "vdev1.conf.tmp", "dev1.conf",
                          "vdev1", "vdevx.conf", ""}) {
    BOOST_TEST(!ParseVdevConfFileName(bad).ok(), bad);
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
