// The HAMi wire formats: every worked example of seed-behaviour.md §5.2-5.4
// round-trips byte for byte; malformed values are rejected with a message.
#include <boost/test/unit_test.hpp>
#include <map>

#include "hcudp/hami/container_index.h"
#include "hcudp/hami/node_devices.h"
#include "hcudp/hami/pending_pod.h"
#include "hcudp/hami/pod_devices.h"

namespace hcudp::hami {
namespace {

// ----- node devices -----

constexpr std::string_view kFullExample =
    "HCU-SN01,4,65520,100,HCU-K100_AI,0,true,0,hami:HCU-SN02,4,65520,100,HCU-K100_AI,1,true,1,"
    "hami:";
constexpr std::string_view kRemainingExample =
    "HCU-SN01,3,57328,70,HCU-K100_AI,0,true,0,hami:HCU-SN02,4,65520,100,HCU-K100_AI,1,true,1,"
    "hami:";

// Two K100_AI cards, 65520 MiB and 120 CUs each; card 0 carries the worked
// example's 36 CU / 8192 MiB vHCU.
NodeInventory ExampleNode() {
  NodeInventory inv;
  for (int i = 0; i < 2; ++i) {
    Card c;
    c.index = i;
    c.bdf = i == 0 ? "0000:09:00.0" : "0000:0a:00.0";
    c.model = "K100_AI";
    c.serial = i == 0 ? "SN01" : "SN02";
    c.compute_units = 120;
    c.memory_bytes = 65520 * kMiB;
    c.numa_node = i;
    inv.cards.push_back(c);
  }
  Vhcu v;
  v.id = 2;
  v.card = 0;
  v.compute_units = 36;
  v.memory_mib = 8192;
  inv.vhcus.push_back(v);
  return inv;
}

BOOST_AUTO_TEST_CASE(node_devices_worked_examples_round_trip_byte_for_byte) {
  for (std::string_view value : {kFullExample, kRemainingExample}) {
    auto devices = DecodeNodeDevices(value);
    BOOST_REQUIRE_MESSAGE(devices.ok(), devices.status().ToString());
    BOOST_REQUIRE_EQUAL(devices->size(), 2u);
    auto again = EncodeNodeDevices(*devices);
    BOOST_REQUIRE(again.ok());
    BOOST_TEST(*again == value);
  }
}

BOOST_AUTO_TEST_CASE(node_devices_decode_fields_of_the_remaining_example) {
  auto devices = DecodeNodeDevices(kRemainingExample);
  BOOST_REQUIRE(devices.ok());
  const NodeDevice& d = (*devices)[0];
  BOOST_TEST(d.id == "HCU-SN01");
  BOOST_TEST(d.count == 3);
  BOOST_TEST(d.devmem_mib == 57328);
  BOOST_TEST(d.devcore_percent == 70);
  BOOST_TEST(d.type == "HCU-K100_AI");
  BOOST_TEST(d.numa == 0);
  BOOST_TEST(d.healthy);
  BOOST_TEST(d.index == 0);
  BOOST_TEST(d.mode == "hami");
  BOOST_TEST((*devices)[1].index == 1);
}

BOOST_AUTO_TEST_CASE(node_registration_from_inventory_matches_the_worked_example) {
  NodeRegistration reg = BuildNodeRegistration(ExampleNode(), 4);
  BOOST_TEST(reg.skipped.empty());
  BOOST_TEST(*EncodeNodeDevices(reg.full) == kFullExample);
  BOOST_TEST(*EncodeNodeDevices(reg.remaining) == kRemainingExample);
}

BOOST_AUTO_TEST_CASE(node_registration_orders_cards_by_index_whatever_the_input_order) {
  NodeInventory inv = ExampleNode();
  std::swap(inv.cards[0], inv.cards[1]);
  NodeRegistration reg = BuildNodeRegistration(inv, 4);
  BOOST_TEST(*EncodeNodeDevices(reg.full) == kFullExample);
}

BOOST_AUTO_TEST_CASE(node_registration_remaining_count_never_goes_negative) {
  NodeInventory inv = ExampleNode();
  for (int id = 3; id < 8; ++id) {
    Vhcu v;
    v.id = id;
    v.card = 1;
    v.compute_units = 10;
    v.memory_mib = 1000;
    inv.vhcus.push_back(v);
  }
  NodeRegistration reg = BuildNodeRegistration(inv, 4);
  BOOST_REQUIRE_EQUAL(reg.remaining.size(), 2u);
  BOOST_TEST(reg.remaining[1].count == 0);
  BOOST_TEST(reg.remaining[1].devmem_mib == 65520 - 5000);
  BOOST_TEST(reg.remaining[1].devcore_percent == 58);  // trunc(70 * 100 / 120)
}

BOOST_AUTO_TEST_CASE(node_registration_skips_cards_that_cannot_be_encoded) {
  struct Case {
    const char* what;
    void (*spoil)(Card&);
  };
  const Case cases[] = {
      {"no memory", [](Card& c) { c.memory_bytes = 0; }},
      {"no compute units", [](Card& c) { c.compute_units = 0; }},
      {"no model name", [](Card& c) { c.model.clear(); }},
      {"no serial number", [](Card& c) { c.serial.clear(); }},
      {"contains one of", [](Card& c) { c.model = "K100:AI"; }},
      {"is not unique", [](Card& c) { c.serial = "SN02"; }},
  };
  for (const Case& tc : cases) {
    NodeInventory inv = ExampleNode();
    tc.spoil(inv.cards[0]);
    NodeRegistration reg = BuildNodeRegistration(inv, 4);
    BOOST_TEST_CONTEXT(tc.what) {
      BOOST_REQUIRE_GE(reg.skipped.size(), 1u);
      BOOST_TEST(reg.skipped[0].find(tc.what) != std::string::npos, reg.skipped[0]);
      for (const NodeDevice& d : reg.full) BOOST_TEST(d.index != 0);
    }
  }
}

BOOST_AUTO_TEST_CASE(node_devices_decoder_accepts_hamis_seven_field_form) {
  auto devices = DecodeNodeDevices("GPU-1,10,16384,100,NVIDIA-A10,0,True:");
  BOOST_REQUIRE_MESSAGE(devices.ok(), devices.status().ToString());
  BOOST_REQUIRE_EQUAL(devices->size(), 1u);
  BOOST_TEST((*devices)[0].index == 0);
  BOOST_TEST((*devices)[0].mode == "hami-core");
  BOOST_TEST((*devices)[0].healthy);
}

BOOST_AUTO_TEST_CASE(node_devices_decoder_accepts_the_vendors_uint32_no_numa_and_empty) {
  auto devices = DecodeNodeDevices("HCU-A,4,100,100,HCU-X,4294967295,false,0,hami:");
  BOOST_REQUIRE(devices.ok());
  BOOST_TEST((*devices)[0].numa == 4294967295LL);
  BOOST_TEST(!(*devices)[0].healthy);
  BOOST_TEST(DecodeNodeDevices("")->empty());
}

BOOST_AUTO_TEST_CASE(node_devices_decoder_rejects_malformed_values_naming_the_field) {
  const struct {
    std::string_view value;
    std::string_view message;
  } cases[] = {
      {"HCU-SN01,4,65520,100,HCU-K100_AI,0,true,0,hami", "end with ':'"},
      {"HCU-SN01,4,65520,100,HCU-K100_AI,0,true,0:", "has 8 fields"},
      {"HCU-SN01,4,65520,100,HCU-K100_AI,0,true,0,hami,x:", "has 10 fields"},
      {"HCU-SN01,four,65520,100,HCU-K100_AI,0,true,0,hami:", "field Count"},
      {"HCU-SN01,4,-1,100,HCU-K100_AI,0,true,0,hami:", "field Devmem"},
      {"HCU-SN01,4,65520,101,HCU-K100_AI,0,true,0,hami:", "field Devcore"},
      {"HCU-SN01,4,65520,100,,0,true,0,hami:", "field Type"},
      {"HCU-SN01,4,65520,100,HCU-K100_AI,-2,true,0,hami:", "field Numa"},
      {"HCU-SN01,4,65520,100,HCU-K100_AI,0,yes,0,hami:", "field Health"},
      {"HCU-SN01,4,65520,100,HCU-K100_AI,0,true,-1,hami:", "field Index"},
      {"HCU-SN01,4,65520,100,HCU-K100_AI,0,true,0,:", "field Mode"},
      {",4,65520,100,HCU-K100_AI,0,true,0,hami:", "field Id"},
      {"HCU-SN01,4,65520,100,HCU-K100_AI,0,true,0,hami::", "record 1 is empty"},
      {"HCU-SN01,99999999999,65520,100,HCU-K100_AI,0,true,0,hami:", "field Count"},
      {"HCU-SN01, 4,65520,100,HCU-K100_AI,0,true,0,hami:", "field Count"},
  };
  for (const auto& tc : cases) {
    auto devices = DecodeNodeDevices(tc.value);
    BOOST_TEST_CONTEXT(tc.value) {
      BOOST_REQUIRE(!devices.ok());
      BOOST_TEST((devices.status().code() == StatusCode::kInvalidArgument));
      BOOST_TEST(devices.status().message().find(tc.message) != std::string::npos,
                 devices.status().message());
    }
  }
}

BOOST_AUTO_TEST_CASE(node_devices_encoder_refuses_separators_inside_fields) {
  NodeDevice d;
  d.id = "HCU-SN01";
  d.type = "HCU-K100,AI";
  auto value = EncodeNodeDevices({d});
  BOOST_REQUIRE(!value.ok());
  BOOST_TEST(value.status().message().find("Type") != std::string::npos);
}

// ----- pod devices -----

BOOST_AUTO_TEST_CASE(pod_devices_worked_examples_round_trip_keeping_positions) {
  const struct {
    std::string_view value;
    std::vector<size_t> devices_per_container;
  } cases[] = {
      {"HCU-SN01,HCU,8192,30:;", {1}},
      {";HCU-SN01,HCU,8192,30:;", {0, 1}},
      {"HCU-SN01,HCU,65520,100:HCU-SN02,HCU,65520,100:;", {2}},
      {";", {0}},
      {"", {}},
      {"HCU-SN01,HCU,8192,30:;;HCU-SN02,HCU,1024,10:;", {1, 0, 1}},
  };
  for (const auto& tc : cases) {
    BOOST_TEST_CONTEXT(tc.value) {
      auto pod = DecodePodDevices(tc.value);
      BOOST_REQUIRE_MESSAGE(pod.ok(), pod.status().ToString());
      BOOST_REQUIRE_EQUAL(pod->size(), tc.devices_per_container.size());
      for (size_t c = 0; c < pod->size(); ++c) {
        BOOST_TEST((*pod)[c].size() == tc.devices_per_container[c]);
      }
      BOOST_TEST(*EncodePodDevices(*pod) == tc.value);
    }
  }
}

BOOST_AUTO_TEST_CASE(pod_devices_decode_the_fields_of_one_device) {
  auto pod = DecodePodDevices("HCU-SN01,HCU,8192,30:;");
  BOOST_REQUIRE(pod.ok());
  const ContainerDevice& d = (*pod)[0][0];
  BOOST_TEST(d.uuid == "HCU-SN01");
  BOOST_TEST(d.type == "HCU");
  BOOST_TEST(d.used_mem_mib == 8192);
  BOOST_TEST(d.used_cores_percent == 30);
}

BOOST_AUTO_TEST_CASE(pod_devices_decoder_rejects_malformed_values) {
  const struct {
    std::string_view value;
    std::string_view message;
  } cases[] = {
      {"HCU-SN01,HCU,8192,30;", "end with ':'"},
      {"HCU-SN01,HCU,8192:;", "has 3 fields"},
      {"HCU-SN01,HCU,8192,30,x:;", "has 5 fields"},
      {"HCU-SN01,HCU,lots,30:;", "field Usedmem"},
      {"HCU-SN01,HCU,8192,130:;", "field Usedcores"},
      {",HCU,8192,30:;", "field UUID"},
      {"HCU-SN01,,8192,30:;", "field Type"},
      {"HCU-SN01,HCU,8192,30::;", "record 1 is empty"},
      {";x;", "container 1"},
  };
  for (const auto& tc : cases) {
    auto pod = DecodePodDevices(tc.value);
    BOOST_TEST_CONTEXT(tc.value) {
      BOOST_REQUIRE(!pod.ok());
      BOOST_TEST(pod.status().message().find(tc.message) != std::string::npos,
                 pod.status().message());
    }
  }
}

BOOST_AUTO_TEST_CASE(hamis_view_drops_empty_containers) {
  auto pod = DecodePodDevices(";HCU-SN01,HCU,8192,30:;;");
  BOOST_REQUIRE(pod.ok());
  BOOST_TEST(pod->size() == 3u);
  BOOST_TEST(DropEmptyContainers(*pod).size() == 1u);
  BOOST_TEST(HasPendingDevices(*pod));
  BOOST_TEST(!HasPendingDevices(*DecodePodDevices(";;")));
}

// VendorEraseFirstContainer(before) serves one device, `served_uuid`, and
// leaves `after`.
void RequireVendorErase(std::string_view before, std::string_view after,
                        std::string_view served_uuid) {
  BOOST_TEST_CONTEXT(before) {
    ContainerDevices served;
    auto left = VendorEraseFirstContainer(before, &served);
    BOOST_REQUIRE_MESSAGE(left.ok(), left.status().ToString());
    BOOST_TEST(*left == after);
    BOOST_REQUIRE_EQUAL(served.size(), 1u);
    BOOST_TEST(served[0].uuid == served_uuid);
  }
}

BOOST_AUTO_TEST_CASE(vendor_erase_reproduces_the_vendors_re_encoding) {
  const struct {
    std::string_view before;
    std::string_view after;
    std::string_view served_uuid;
  } cases[] = {
      {"HCU-SN01,HCU,8192,30:;", ";", "HCU-SN01"},  // the worked example's step 2
      {";HCU-SN01,HCU,8192,30:;", ";", "HCU-SN01"},
      {";HCU-A,HCU,1,1:;HCU-B,HCU,2,2:;", ";HCU-B,HCU,2,2:;", "HCU-A"},
      {"HCU-A,HCU,1,1:;;HCU-B,HCU,2,2:;", ";HCU-B,HCU,2,2:;", "HCU-A"},
      {";HCU-B,HCU,2,2:;", ";", "HCU-B"},
  };
  for (const auto& tc : cases) RequireVendorErase(tc.before, tc.after, tc.served_uuid);
}

// Writers that join the containers with ';' and add no final ';' (Volcano's
// Hygon vDCU code encodes with strings.Join(.., ";"); its vHCU twin writes
// these very keys): HAMi's decoder, which the vendor plugin runs, splits on
// ';' and accepts these, and the vendor serves them.
BOOST_AUTO_TEST_CASE(pod_devices_without_a_final_semicolon_are_served_as_the_vendor_does) {
  auto one = DecodePodDevices("HCU-SN01,HCU,8192,30:");
  BOOST_REQUIRE_MESSAGE(one.ok(), one.status().ToString());
  BOOST_REQUIRE_EQUAL(one->size(), 1u);
  BOOST_TEST((*one)[0].size() == 1u);
  auto two = DecodePodDevices("HCU-A,HCU,1,1:;HCU-B,HCU,2,2:");
  BOOST_REQUIRE_MESSAGE(two.ok(), two.status().ToString());
  BOOST_REQUIRE_EQUAL(two->size(), 2u);
  BOOST_TEST((*two)[1][0].uuid == "HCU-B");

  const struct {
    std::string_view before;
    std::string_view after;  // re-encoded as HAMi's EncodePodSingleDevice does
    std::string_view served_uuid;
  } cases[] = {
      {"HCU-SN01,HCU,8192,30:", ";", "HCU-SN01"},
      {"HCU-A,HCU,1,1:;HCU-B,HCU,2,2:", ";HCU-B,HCU,2,2:;", "HCU-A"},
  };
  for (const auto& tc : cases) RequireVendorErase(tc.before, tc.after, tc.served_uuid);
}

BOOST_AUTO_TEST_CASE(vendor_erase_without_pending_devices_is_device_request_not_found) {
  auto after = VendorEraseFirstContainer(";", nullptr);
  BOOST_REQUIRE(!after.ok());
  BOOST_TEST((after.status().code() == StatusCode::kFailedPrecondition));
  BOOST_TEST(after.status().message().find("device request not found") != std::string::npos);
}

// ----- container index -----

BOOST_AUTO_TEST_CASE(container_index_round_trips) {
  const struct {
    std::string_view value;
    std::vector<int> indexes;
  } cases[] = {{"0,", {0}}, {"0,2,", {0, 2}}, {"1,", {1}}, {"", {}}};
  for (const auto& tc : cases) {
    BOOST_TEST_CONTEXT(tc.value) {
      auto indexes = DecodeContainerIndex(tc.value);
      BOOST_REQUIRE(indexes.ok());
      BOOST_TEST(*indexes == tc.indexes);
      BOOST_TEST(EncodeContainerIndex(tc.indexes) == tc.value);
    }
  }
}

BOOST_AUTO_TEST_CASE(container_index_rejects_malformed_values) {
  for (std::string_view bad : {"0", ",", "a,", "-1,", "0,,", " 0,", "0;"}) {
    BOOST_TEST_CONTEXT(bad) {
      auto indexes = DecodeContainerIndex(bad);
      BOOST_REQUIRE(!indexes.ok());
      BOOST_TEST((indexes.status().code() == StatusCode::kInvalidArgument));
    }
  }
}

BOOST_AUTO_TEST_CASE(container_indexes_from_allocated_as_the_vendor_computes_them) {
  const struct {
    std::string_view allocated;
    int containers;
    std::vector<int> indexes;
  } cases[] = {
      {"HCU-A,HCU,1,1:;", 1, {0}},
      {";HCU-A,HCU,1,1:;", 2, {1}},
      {"HCU-A,HCU,1,1:;;HCU-B,HCU,2,2:;", 3, {0, 2}},
      // Fewer parts than containers: right-aligned (the vendor prepends ';').
      {"HCU-A,HCU,1,1:;", 3, {1}},
  };
  for (const auto& tc : cases) {
    BOOST_TEST_CONTEXT(tc.allocated << " x" << tc.containers) {
      auto indexes = ContainerIndexesFromAllocated(tc.allocated, tc.containers);
      BOOST_REQUIRE_MESSAGE(indexes.ok(), indexes.status().ToString());
      BOOST_TEST(*indexes == tc.indexes);
    }
  }
  // The worked example: container-index "0,".
  BOOST_TEST(EncodeContainerIndex(*ContainerIndexesFromAllocated("HCU-SN01,HCU,8192,30:;", 1)) ==
             "0,");
}

}  // namespace
}  // namespace hcudp::hami

namespace hcudp::hami {
namespace {

BOOST_AUTO_TEST_CASE(allocating_pod_test_needs_bind_time_phase_and_node) {
  const std::map<std::string, std::string> example = {
      {"hami.io/vgpu-node", "node1"},
      {"hami.io/bind-phase", "allocating"},
      {"hami.io/bind-time", "1740796800"},
  };
  BOOST_TEST(IsAllocatingOn(example, "node1"));
  BOOST_TEST(!IsAllocatingOn(example, "node2"));
  for (const char* key : {"hami.io/vgpu-node", "hami.io/bind-phase", "hami.io/bind-time"}) {
    auto without = example;
    without.erase(key);
    BOOST_TEST_CONTEXT(key) { BOOST_TEST(!IsAllocatingOn(without, "node1")); }
  }
  auto done = example;
  done["hami.io/bind-phase"] = "success";
  BOOST_TEST(!IsAllocatingOn(done, "node1"));
}

BOOST_AUTO_TEST_CASE(bind_time_is_unix_seconds) {
  BOOST_TEST(*ParseBindTime("1740796800") == 1740796800);
  for (std::string_view bad : {"", "-1", "2026-03-01T10:00:00Z", "17407968OO"}) {
    BOOST_TEST_CONTEXT(bad) { BOOST_TEST(!ParseBindTime(bad).ok()); }
  }
}

}  // namespace
}  // namespace hcudp::hami
