// WatchedSlices: a LIST that is older than one of the publisher's own writes
// (it raced the write, or came from a watch cache behind it) does not undo
// the write; a LIST at or after the write, or one that saw a later change,
// is the truth.
#include "dra/slice_watch.h"

#include <boost/test/unit_test.hpp>
#include <string>

namespace hcudp::dra {
namespace {

std::string Slice(const std::string& name, const std::string& rv) {
  return R"({"metadata":{"name":")" + name + R"(","resourceVersion":")" + rv +
         R"("},"spec":{"pool":{"generation":1}}})";
}

std::string List(const std::string& rv, const std::string& items) {
  return R"({"metadata":{"resourceVersion":")" + rv + R"("},"items":[)" + items + "]}";
}

bool Has(const WatchedSlices& w, const std::string& name) {
  return w.Snapshot().value_or("").find("\"" + name + "\"") != std::string::npos;
}

BOOST_AUTO_TEST_SUITE(slice_watch)

// The start-up race the publisher had: the watch loop's LIST was answered
// before the worker's create, and applied after it.
BOOST_AUTO_TEST_CASE(a_list_older_than_our_create_keeps_the_created_slice) {
  WatchedSlices w;
  w.ApplyWrite("node-a-hcu-1", Slice("node-a-hcu-1", "120"));
  BOOST_REQUIRE(w.ApplyList(List("118", "")).ok());
  BOOST_TEST(Has(w, "node-a-hcu-1"));
  // The watch, from 118, then delivers the create: nothing changes.
  WatchEvent added;
  added.type = WatchEventType::kAdded;
  added.object_json = Slice("node-a-hcu-1", "120");
  w.ApplyEvent(added);
  BOOST_TEST(Has(w, "node-a-hcu-1"));
}

BOOST_AUTO_TEST_CASE(a_list_after_our_write_is_the_truth) {
  WatchedSlices w;
  w.ApplyWrite("node-a-hcu-1", Slice("node-a-hcu-1", "120"));
  // Deleted by someone after our create (kubelet restarting): gone.
  BOOST_REQUIRE(w.ApplyList(List("130", "")).ok());
  BOOST_TEST(!Has(w, "node-a-hcu-1"));
  // And the write is confirmed or overridden for good: an older list later
  // (a cache behind) does not bring it back.
  BOOST_REQUIRE(w.ApplyList(List("119", "")).ok());
  BOOST_TEST(!Has(w, "node-a-hcu-1"));
}

BOOST_AUTO_TEST_CASE(a_newer_version_in_the_list_wins_over_our_write) {
  WatchedSlices w;
  w.ApplyWrite("s", Slice("s", "120"));
  BOOST_REQUIRE(w.ApplyList(List("118", Slice("s", "119"))).ok());
  BOOST_TEST(w.Snapshot().value_or("").find("\"120\"") != std::string::npos);  // ours, newer
  w.ApplyWrite("s", Slice("s", "125"));
  BOOST_REQUIRE(w.ApplyList(List("124", Slice("s", "126"))).ok());  // changed after us
  BOOST_TEST(w.Snapshot().value_or("").find("\"126\"") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(versions_that_are_not_integers_leave_the_list_in_charge) {
  WatchedSlices w;
  w.ApplyWrite("s", Slice("s", "abc"));
  BOOST_REQUIRE(w.ApplyList(List("118", "")).ok());
  BOOST_TEST(!Has(w, "s"));
  w.ApplyWrite("t", Slice("t", "120"));
  BOOST_REQUIRE(w.ApplyList(List("x9", "")).ok());
  BOOST_TEST(!Has(w, "t"));
}

BOOST_AUTO_TEST_CASE(our_delete_is_not_undone_by_the_overlay) {
  WatchedSlices w;
  w.ApplyWrite("s", Slice("s", "120"));
  w.ApplyWrite("s", "");  // deleted by us
  BOOST_REQUIRE(w.ApplyList(List("118", "")).ok());
  BOOST_TEST(!Has(w, "s"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::dra
