#include "hcudp/mig_conf.h"

#include <boost/test/unit_test.hpp>

#include "testing/testutil.h"

namespace hcudp {
namespace {

using testing::ReplaceFirst;

// dev3gi1ci0.conf of fixture node C (hcu-hardware.md §6.3), as `hy-smi mig` writes it.
const std::string& Dev3Gi1Ci0() {
  static const std::string text =
      hcudp::testing::ReadFile(hcudp::testing::SourcePath("test/fixtures/mig/dev3gi1ci0.conf"));
  return text;
}

BOOST_AUTO_TEST_SUITE(mig_conf)

BOOST_AUTO_TEST_CASE(parses_reference_example) {
  StatusOr<MigConf> conf = ParseMigConf(Dev3Gi1Ci0());
  BOOST_REQUIRE_MESSAGE(conf.ok(), conf.status().ToString());
  BOOST_TEST(conf->gi.pci == "0000:b9:00.0");
  BOOST_TEST(conf->gi.id == 1);
  BOOST_TEST(conf->gi.cu_mask_lo == "0xffffff0000000000");
  BOOST_TEST(conf->gi.cu_mask_hi == "0x000000000000ffff");
  BOOST_TEST(conf->gi.gpu_slice_count == 2);
  BOOST_TEST(conf->gi.memory_size_mb == 32760u);
  BOOST_TEST(conf->gi.placement_start == 2);
  BOOST_TEST(conf->ci.gi_id == 1);
  BOOST_TEST(conf->ci.id == 0);
  BOOST_TEST(conf->ci.cu_count == 40);
  BOOST_TEST(conf->ci.gpu_slice_count == 2);
  BOOST_TEST(conf->ci.mig_uuid == "0fd630f1-f29d-4da9-953f-48f1a09f76b5");
}

BOOST_AUTO_TEST_CASE(format_reproduces_reference_text_byte_for_byte) {
  StatusOr<MigConf> conf = ParseMigConf(Dev3Gi1Ci0());
  BOOST_REQUIRE(conf.ok());
  BOOST_TEST(FormatMigConf(*conf) == Dev3Gi1Ci0());
}

BOOST_AUTO_TEST_CASE(profile_name_of_reference_example_is_4g_31gb) {
  StatusOr<MigConf> conf = ParseMigConf(Dev3Gi1Ci0());
  BOOST_REQUIRE(conf.ok());
  BOOST_TEST(MigProfileName(8, conf->gi.gpu_slice_count, conf->ci.gpu_slice_count,
                            conf->gi.memory_size_mb) == "4g.31gb");
}

BOOST_AUTO_TEST_CASE(profile_names_follow_the_vendor_formula) {
  BOOST_TEST(MigProfileName(8, 1, 1, 16380) == "2g.15gb");
  BOOST_TEST(MigProfileName(8, 2, 2, 32760) == "4g.31gb");
  BOOST_TEST(MigProfileName(8, 4, 4, 65520) == "8g.63gb");
  BOOST_TEST(MigProfileName(8, 2, 1, 32760) == "2c.4g.31gb");
  BOOST_TEST(MigProfileName(4, 2, 2, 32760) == "2g.31gb");
}

struct BadCase {
  const char* name;
  std::string text;
  const char* expect;
};

BOOST_AUTO_TEST_CASE(rejects_malformed_conf_naming_the_line) {
  const BadCase cases[] = {
      {"empty", "", "empty"},
      {"truncated", Dev3Gi1Ci0().substr(0, Dev3Gi1Ci0().find("profile_id")),
       "file ends before key \"profile_id\""},
      {"keys out of order",
       ReplaceFirst(Dev3Gi1Ci0(), "gi_count_max:       2", "gi_count_maxx:      2"),
       "line 8: expected key \"gi_count_max\""},
      {"extra line", Dev3Gi1Ci0() + "extra: 1\n", "line 28: unexpected"},
      {"bad uuid", ReplaceFirst(Dev3Gi1Ci0(), "0fd630f1-f29d", "0fd630f1_f29d"),
       "line 27: mig_uuid"},
      {"bad number", ReplaceFirst(Dev3Gi1Ci0(), "cu_count:           40", "cu_count:           4O"),
       "line 9: cu_count"},
      {"bad bdf", ReplaceFirst(Dev3Gi1Ci0(), "pci:                0000:b9:00.0", "pci: b9:00.0"),
       "line 1: pci"},
      {"bad mask", ReplaceFirst(Dev3Gi1Ci0(), "pipe_mask:          0x0c", "pipe_mask: 12"),
       "line 3: pipe_mask"},
      {"mismatched gi id", ReplaceFirst(Dev3Gi1Ci0(), "gi_id:              1", "gi_id: 2"),
       "gi_id 2"},
      {"not key value", "hello world\n", "line 1: expected"},
  };
  for (const BadCase& c : cases) {
    StatusOr<MigConf> conf = ParseMigConf(c.text);
    BOOST_TEST_CONTEXT(c.name) {
      BOOST_REQUIRE(!conf.ok());
      BOOST_TEST(conf.status().message().find(c.expect) != std::string::npos,
                 conf.status().message());
    }
  }
}

BOOST_AUTO_TEST_CASE(file_name_gives_card_gi_ci) {
  StatusOr<MigConfName> n = ParseMigConfFileName("dev3gi1ci0.conf");
  BOOST_REQUIRE(n.ok());
  BOOST_TEST(n->card == 3);
  BOOST_TEST(n->gi == 1);
  BOOST_TEST(n->ci == 0);
  StatusOr<MigConfName> big = ParseMigConfFileName("dev12gi10ci2.conf");
  BOOST_REQUIRE(big.ok());
  BOOST_TEST(big->card == 12);
  BOOST_TEST(big->gi == 10);
  for (const char* bad : {"dev3gi1ci0", "dev3gi1.conf", "devgi1ci0.conf", "dev03gi1ci0.conf",
                          "dev3gi1ci0.conf.tmp", "xdev3gi1ci0.conf", ""}) {
    BOOST_TEST(!ParseMigConfFileName(bad).ok(), bad);
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
