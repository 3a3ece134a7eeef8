// Node lock (exact match), handshake, mark file names and the vHCU size rule.
#include <boost/test/unit_test.hpp>

#include "hcudp/hami/handshake.h"
#include "hcudp/hami/mark_file.h"
#include "hcudp/hami/node_lock.h"
#include "hcudp/hami/pod_devices.h"
#include "hcudp/hami/rfc3339.h"
#include "hcudp/hami/size_rule.h"

namespace hcudp::hami {
namespace {

using std::chrono::seconds;
using std::chrono::system_clock;

system_clock::time_point Unix(int64_t s) { return system_clock::time_point(seconds(s)); }

// ----- node lock -----

BOOST_AUTO_TEST_CASE(node_lock_worked_example_parses) {
  auto lock = ParseNodeLock("2026-03-01T10:00:00+08:00,default,hcu-dynamic-vhcu-demo");
  BOOST_REQUIRE_MESSAGE(lock.ok(), lock.status().ToString());
  BOOST_TEST(lock->pod_namespace == "default");
  BOOST_TEST(lock->pod_name == "hcu-dynamic-vhcu-demo");
  BOOST_TEST(lock->time_text == "2026-03-01T10:00:00+08:00");
  // 2026-03-01T02:00:00Z
  BOOST_TEST(lock->time.time_since_epoch().count() ==
             std::chrono::duration_cast<system_clock::duration>(seconds(1772330400)).count());
}

BOOST_AUTO_TEST_CASE(node_lock_format_round_trips_in_utc) {
  auto value = FormatNodeLock(Unix(1772330400), "default", "demo");
  BOOST_REQUIRE(value.ok());
  BOOST_TEST(*value == "2026-03-01T02:00:00Z,default,demo");
  auto lock = ParseNodeLock(*value);
  BOOST_REQUIRE(lock.ok());
  BOOST_TEST((lock->time == Unix(1772330400)));
}

BOOST_AUTO_TEST_CASE(node_lock_is_held_only_by_the_exact_namespace_and_name) {
  auto lock = ParseNodeLock("2026-03-01T10:00:00+08:00,default,ab");
  BOOST_REQUIRE(lock.ok());
  BOOST_TEST(NodeLockHeldBy(*lock, "default", "ab"));
  BOOST_TEST(!NodeLockHeldBy(*lock, "default", "a"));  // no substring match
  BOOST_TEST(!NodeLockHeldBy(*lock, "default", "abc"));
  BOOST_TEST(!NodeLockHeldBy(*lock, "other", "ab"));  // namespace compared
  BOOST_TEST(!NodeLockHeldBy(*lock, "defaul", "ab"));
}

BOOST_AUTO_TEST_CASE(node_lock_rejects_malformed_values) {
  const struct {
    std::string_view value;
    std::string_view message;
  } cases[] = {
      {"", "1 comma fields"},
      {"2026-03-01T10:00:00Z,default", "2 comma fields"},
      {"2026-03-01T10:00:00Z,default,a,b", "4 comma fields"},
      {"yesterday,default,a", "not RFC3339"},
      {"2026-03-01 10:00:00Z,default,a", "not RFC3339"},
      {"2026-02-30T10:00:00Z,default,a", "not RFC3339"},
      {"2026-03-01T24:00:00Z,default,a", "not RFC3339"},
      {"2026-03-01T10:00:00,default,a", "no valid zone"},
      {"2026-03-01T10:00:00+8:00,default,a", "no valid zone"},
      {"2026-03-01T10:00:00.Z,default,a", "fraction"},
      {"2026-03-01T10:00:00Z,,a", "empty namespace"},
      {"2026-03-01T10:00:00Z,default,", "empty pod name"},
  };
  for (const auto& tc : cases) {
    BOOST_TEST_CONTEXT(tc.value) {
      auto lock = ParseNodeLock(tc.value);
      BOOST_REQUIRE(!lock.ok());
      BOOST_TEST(lock.status().message().find(tc.message) != std::string::npos,
                 lock.status().message());
    }
  }
}

BOOST_AUTO_TEST_CASE(rfc3339_accepts_fractions_and_offsets) {
  BOOST_TEST((*ParseRfc3339("2026-03-01T02:00:00.123456789Z") == Unix(1772330400)));
  BOOST_TEST((*ParseRfc3339("2026-02-28T21:30:00-04:30") == Unix(1772330400)));
  BOOST_TEST(FormatRfc3339Utc(Unix(0)) == "1970-01-01T00:00:00Z");
}

// ----- handshake -----

BOOST_AUTO_TEST_CASE(handshake_we_write_is_reported_with_a_clean_utc_time) {
  std::string value = FormatHandshakeReported(Unix(1772330400));
  BOOST_TEST(value == "Reported 2026-03-01T02:00:00Z");
  auto h = ParseHandshake(value);
  BOOST_REQUIRE(h.ok());
  BOOST_TEST((h->state == HandshakeState::kReported));
  BOOST_REQUIRE(h->time.has_value());
  BOOST_TEST((*h->time == Unix(1772330400)));
}

BOOST_AUTO_TEST_CASE(handshake_classifies_as_the_scheduler_does) {
  const struct {
    std::string_view value;
    HandshakeState state;
    bool has_time;
  } cases[] = {
      {"Requesting_2026-03-01 10:00:00", HandshakeState::kRequesting, true},
      {"Deleted_2026-03-01 10:00:00", HandshakeState::kDeleted, true},
      // The vendor's Go time.String(): a report whose time we do not parse.
      {"Reported 2026-03-01 10:00:00.1 +0800 CST m=+30.0", HandshakeState::kReported, false},
      {"Requesting_garbage", HandshakeState::kRequesting, false},
  };
  for (const auto& tc : cases) {
    BOOST_TEST_CONTEXT(tc.value) {
      auto h = ParseHandshake(tc.value);
      BOOST_REQUIRE_MESSAGE(h.ok(), h.status().ToString());
      BOOST_TEST((h->state == tc.state));
      BOOST_TEST(h->time.has_value() == tc.has_time);
    }
  }
  auto requesting = ParseHandshake("Requesting_2026-03-01 10:00:00");
  BOOST_TEST((*requesting->time == Unix(1772359200)));  // read as UTC
}

// HAMi's util.CheckHealth and Volcano's vGPU/vDCU/vHCU devices write the
// Requesting/Deleted time as "2006.01.02 15:04:05".
BOOST_AUTO_TEST_CASE(handshake_reads_the_dotted_scheduler_time_too) {
  for (std::string_view value : {"Requesting_2026.03.01 10:00:00", "Deleted_2026.03.01 10:00:00"}) {
    BOOST_TEST_CONTEXT(value) {
      auto h = ParseHandshake(value);
      BOOST_REQUIRE_MESSAGE(h.ok(), h.status().ToString());
      BOOST_REQUIRE(h->time.has_value());
      BOOST_TEST((*h->time == Unix(1772359200)));  // read as UTC
    }
  }
  BOOST_TEST(!ParseHandshake("Requesting_2026.03-01 10:00:00")->time.has_value());
}

BOOST_AUTO_TEST_CASE(handshake_rejects_other_text) {
  for (std::string_view bad : {"", "reported now", "Reported", "OK"}) {
    BOOST_TEST_CONTEXT(bad) { BOOST_TEST(!ParseHandshake(bad).ok()); }
  }
}

// ----- mark file names -----

BOOST_AUTO_TEST_CASE(mark_file_names_round_trip) {
  const struct {
    std::string_view name;
    MarkFileName mark;
  } cases[] = {
      {"0f6e2c1a-7d3b-4a4e-9a1e-2f7c9b1d0e11_hcu-dynamic-vhcu-demo_0_2",
       {"0f6e2c1a-7d3b-4a4e-9a1e-2f7c9b1d0e11", "hcu-dynamic-vhcu-demo", 0, 2}},
      {"uid_main_3_-1", {"uid", "main", 3, kWholeCardVhcuId}},
  };
  for (const auto& tc : cases) {
    BOOST_TEST_CONTEXT(tc.name) {
      auto mark = ParseMarkFileName(tc.name);
      BOOST_REQUIRE_MESSAGE(mark.ok(), mark.status().ToString());
      BOOST_TEST((*mark == tc.mark));
      BOOST_TEST(*FormatMarkFileName(tc.mark) == tc.name);
    }
  }
  BOOST_TEST(ParseMarkFileName("uid_main_3_-1")->whole_card());
}

BOOST_AUTO_TEST_CASE(mark_file_names_reject_malformed_values) {
  for (std::string_view bad :
       {"uid_main_0", "uid_main_0_1_2", "_main_0_1", "uid__0_1", "uid_main_x_1", "uid_main_0_-2",
        "uid_main_-1_1", "uid_main_0_", "", "uid_ma/in_0_1"}) {
    BOOST_TEST_CONTEXT(bad) {
      auto mark = ParseMarkFileName(bad);
      BOOST_REQUIRE(!mark.ok());
      BOOST_TEST((mark.status().code() == StatusCode::kInvalidArgument));
    }
  }
  BOOST_TEST(!FormatMarkFileName({"u_id", "main", 0, 1}).ok());
  BOOST_TEST(!FormatMarkFileName({"uid", "../x", 0, 1}).ok());
  BOOST_TEST(!FormatMarkFileName({"uid", "main", -1, 1}).ok());
  BOOST_TEST(!FormatMarkFileName({"uid", "main", 0, -2}).ok());
}

BOOST_AUTO_TEST_CASE(mark_file_time_uses_the_vendors_layout) {
  std::string text = FormatMarkFileTime(system_clock::now());
  BOOST_REQUIRE_EQUAL(text.size(), 19u);
  BOOST_TEST(text[4] == '-');
  BOOST_TEST(text[10] == ' ');
  BOOST_TEST(text[13] == ':');
}

// ----- vHCU size rule -----

BOOST_AUTO_TEST_CASE(vhcu_compute_units_are_rounded_up_with_a_minimum_of_one) {
  const struct {
    int percent, card_cu, want;
  } cases[] = {
      {30, 120, 36},  // the worked example on K100_AI
      {25, 120, 30}, {1, 120, 2}, {10, 64, 7}, {100, 120, 120}, {0, 120, 1}, {1, 1, 1},
  };
  for (const auto& tc : cases) {
    BOOST_TEST_CONTEXT(tc.percent << "% of " << tc.card_cu) {
      BOOST_TEST(VhcuComputeUnits(tc.percent, tc.card_cu) == tc.want);
    }
  }
}

NodeInventory TwoK100() {
  NodeInventory inv;
  for (int i = 0; i < 2; ++i) {
    Card c;
    c.index = i;
    c.bdf = "0000:0" + std::to_string(9 + i) + ":00.0";
    c.model = "K100_AI";
    c.serial = "SN0" + std::to_string(i + 1);
    c.compute_units = 120;
    c.memory_bytes = 65520 * kMiB;
    inv.cards.push_back(c);
  }
  return inv;
}

BOOST_AUTO_TEST_CASE(plan_table_follows_the_outcome_matrix_with_defect_20_fixed) {
  const struct {
    const char* what;
    std::string_view request;
    bool create_vhcu;
    int cu;
    uint64_t mib;
  } cases[] = {
      {"30%/8192 MiB: a 36 CU vHCU", "HCU-SN01,HCU,8192,30:", true, 36, 8192},
      {"100%/less memory: a vHCU of all CUs", "HCU-SN01,HCU,8192,100:", true, 120, 8192},
      {"100%/all memory: whole card", "HCU-SN01,HCU,65520,100:", false, 0, 0},
      {"50%/all memory: whole card (marked)", "HCU-SN01,HCU,65520,50:", false, 0, 0},
      {"more memory than the card: whole card", "HCU-SN01,HCU,70000,30:", false, 0, 0},
  };
  for (const auto& tc : cases) {
    BOOST_TEST_CONTEXT(tc.what) {
      auto plans = PlanContainerDevices(*DecodeContainerDevices(tc.request), TwoK100());
      BOOST_REQUIRE_MESSAGE(plans.ok(), plans.status().ToString());
      BOOST_REQUIRE_EQUAL(plans->size(), 1u);
      const DevicePlan& p = (*plans)[0];
      BOOST_TEST(p.card == 0);
      BOOST_TEST(p.card_bdf == "0000:09:00.0");
      BOOST_TEST(p.create_vhcu == tc.create_vhcu);
      BOOST_TEST(p.vhcu_compute_units == tc.cu);
      BOOST_TEST(p.vhcu_memory_mib == tc.mib);
    }
  }
}

BOOST_AUTO_TEST_CASE(plan_for_two_cards_never_creates_a_vhcu) {
  auto plans = PlanContainerDevices(
      *DecodeContainerDevices("HCU-SN02,HCU,8192,30:HCU-SN01,HCU,8192,30:"), TwoK100());
  BOOST_REQUIRE(plans.ok());
  BOOST_REQUIRE_EQUAL(plans->size(), 2u);
  BOOST_TEST((*plans)[0].card == 1);
  BOOST_TEST((*plans)[1].card == 0);
  BOOST_TEST(!(*plans)[0].create_vhcu);
  BOOST_TEST(!(*plans)[1].create_vhcu);
}

BOOST_AUTO_TEST_CASE(plan_rejects_unknown_bad_ambiguous_and_repeated_cards) {
  NodeInventory dup = TwoK100();
  dup.cards[1].serial = "SN01";
  const struct {
    const char* what;
    std::string_view request;
    const NodeInventory inventory;
    StatusCode code;
  } cases[] = {
      {"unknown serial", "HCU-SN09,HCU,8192,30:", TwoK100(), StatusCode::kNotFound},
      {"no HCU- prefix", "GPU-SN01,HCU,8192,30:", TwoK100(), StatusCode::kInvalidArgument},
      {"empty serial", "HCU-,HCU,8192,30:", TwoK100(), StatusCode::kInvalidArgument},
      {"shared serial", "HCU-SN01,HCU,8192,30:", dup, StatusCode::kFailedPrecondition},
      {"card twice", "HCU-SN01,HCU,1,30:HCU-SN01,HCU,1,30:", TwoK100(),
       StatusCode::kInvalidArgument},
  };
  for (const auto& tc : cases) {
    BOOST_TEST_CONTEXT(tc.what) {
      auto plans = PlanContainerDevices(*DecodeContainerDevices(tc.request), tc.inventory);
      BOOST_REQUIRE(!plans.ok());
      BOOST_TEST((plans.status().code() == tc.code), plans.status().ToString());
    }
  }
  BOOST_TEST(!PlanContainerDevices({}, TwoK100()).ok());
}

}  // namespace
}  // namespace hcudp::hami
