// Any HAMi value -> named records and back (hcuctl hami decode / encode).
#include "hami_readable.h"

#include <boost/test/unit_test.hpp>

namespace hcuctl::hami {
namespace {

BOOST_AUTO_TEST_CASE(decode_any_detects_each_encoding_and_encodes_back_byte_for_byte) {
  const struct {
    std::string_view value;
    Encoding encoding;
    size_t records;
  } cases[] = {
      {"HCU-SN01,4,65520,100,HCU-K100_AI,0,true,0,hami:HCU-SN02,4,65520,100,HCU-K100_AI,1,true,"
       "1,hami:",
       Encoding::kNodeDevices, 2},
      {"HCU-SN01,HCU,8192,30:;", Encoding::kPodDevices, 1},
      {";HCU-SN01,HCU,8192,30:;", Encoding::kPodDevices, 2},
      {"HCU-SN01,HCU,65520,100:HCU-SN02,HCU,65520,100:;", Encoding::kPodDevices, 2},
      {";", Encoding::kPodDevices, 1},
      {"HCU-SN01,HCU,8192,30:", Encoding::kContainerDevices, 1},
      {"0,2,", Encoding::kContainerIndex, 2},
      {"2026-03-01T10:00:00+08:00,default,hcu-dynamic-vhcu-demo", Encoding::kNodeLock, 1},
      {"Reported 2026-03-01T02:00:00Z", Encoding::kHandshake, 1},
      {"Requesting_2026-03-01 10:00:00", Encoding::kHandshake, 1},
      {"uid_main_0_2", Encoding::kMarkFileName, 1},
  };
  for (const auto& tc : cases) {
    BOOST_TEST_CONTEXT(tc.value) {
      auto decoded = DecodeAnyReadable(tc.value);
      BOOST_REQUIRE_MESSAGE(decoded.ok(), decoded.status().ToString());
      BOOST_TEST(EncodingName(decoded->encoding) == EncodingName(tc.encoding));
      BOOST_TEST(decoded->records.size() == tc.records);
      auto encoded = EncodeReadable(*decoded);
      BOOST_REQUIRE_MESSAGE(encoded.ok(), encoded.status().ToString());
      BOOST_TEST(*encoded == tc.value);
    }
  }
}

BOOST_AUTO_TEST_CASE(decoded_records_carry_named_fields) {
  auto decoded = DecodeAnyReadable(";HCU-SN01,HCU,8192,30:;");
  BOOST_REQUIRE(decoded.ok());
  BOOST_TEST(*decoded->records[0].Find("container") == "0");
  BOOST_TEST(decoded->records[0].Find("uuid") == nullptr);
  BOOST_TEST(*decoded->records[1].Find("container") == "1");
  BOOST_TEST(*decoded->records[1].Find("used_mem_mib") == "8192");
  BOOST_TEST(*decoded->records[1].Find("used_cores_percent") == "30");
}

BOOST_AUTO_TEST_CASE(encode_from_hand_written_records_fills_defaults) {
  ReadableValue value{Encoding::kPodDevices,
                      {{{{"container", "1"},
                         {"uuid", "HCU-SN01"},
                         {"used_mem_mib", "8192"},
                         {"used_cores_percent", "30"}}}}};
  auto encoded = EncodeReadable(value);
  BOOST_REQUIRE_MESSAGE(encoded.ok(), encoded.status().ToString());
  BOOST_TEST(*encoded == ";HCU-SN01,HCU,8192,30:;");

  ReadableValue node{Encoding::kNodeDevices,
                     {{{{"id", "HCU-SN01"},
                        {"count", "4"},
                        {"devmem_mib", "65520"},
                        {"type", "HCU-K100_AI"},
                        {"index", "0"}}}}};
  BOOST_TEST(*EncodeReadable(node) == "HCU-SN01,4,65520,100,HCU-K100_AI,0,true,0,hami:");
}

BOOST_AUTO_TEST_CASE(encode_rejects_missing_or_bad_fields_naming_them) {
  ReadableValue missing{Encoding::kContainerDevices, {{{{"uuid", "HCU-SN01"}}}}};
  auto a = EncodeReadable(missing);
  BOOST_REQUIRE(!a.ok());
  BOOST_TEST(a.status().message().find("used_mem_mib") != std::string::npos, a.status().message());

  ReadableValue bad{Encoding::kMarkFileName,
                    {{{{"pod_uid", "u"}, {"container", "c"}, {"card", "x"}}}}};
  auto b = EncodeReadable(bad);
  BOOST_REQUIRE(!b.ok());
  BOOST_TEST(b.status().message().find("card") != std::string::npos, b.status().message());

  ReadableValue two_locks{Encoding::kNodeLock, {{}, {}}};
  BOOST_TEST(!EncodeReadable(two_locks).ok());
}

BOOST_AUTO_TEST_CASE(decode_any_explains_why_nothing_matched) {
  auto decoded = DecodeAnyReadable("hello world");
  BOOST_REQUIRE(!decoded.ok());
  BOOST_TEST(decoded.status().message().find("as node-devices") != std::string::npos);
  BOOST_TEST(!DecodeAnyReadable("").ok());
}

BOOST_AUTO_TEST_CASE(encoding_names_parse_back) {
  for (Encoding e : {Encoding::kNodeDevices, Encoding::kPodDevices, Encoding::kContainerDevices,
                     Encoding::kContainerIndex, Encoding::kNodeLock, Encoding::kHandshake,
                     Encoding::kMarkFileName}) {
    BOOST_TEST((*ParseEncoding(EncodingName(e)) == e));
  }
  BOOST_TEST(!ParseEncoding("json").ok());
}

}  // namespace
}  // namespace hcuctl::hami
