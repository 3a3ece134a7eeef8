#include "output.h"

#include <boost/test/unit_test.hpp>
#include <sstream>

namespace hcuctl {
namespace {

Value Sample() {
  return Value::MakeObject()
      .Set("bdf", "0000:09:00.0")
      .Set("model", "K100_AI")
      .Set("health", "Healthy")
      .Set("count", 8)
      .Set("mig", false)
      .Set("word", "yes")
      .Set("empty", "")
      .Set("ids", Value::MakeArray().Push("vdev0").Push("123"));
}

BOOST_AUTO_TEST_SUITE(hcuctl_output)

BOOST_AUTO_TEST_CASE(json_keeps_member_order_and_types) {
  std::ostringstream out;
  PrintJson(Sample(), out);
  BOOST_TEST(out.str() ==
             "{\n"
             "  \"bdf\": \"0000:09:00.0\",\n"
             "  \"model\": \"K100_AI\",\n"
             "  \"health\": \"Healthy\",\n"
             "  \"count\": 8,\n"
             "  \"mig\": false,\n"
             "  \"word\": \"yes\",\n"
             "  \"empty\": \"\",\n"
             "  \"ids\": [\n"
             "    \"vdev0\",\n"
             "    \"123\"\n"
             "  ]\n"
             "}\n");
}

BOOST_AUTO_TEST_CASE(yaml_quotes_strings_that_would_read_back_as_other_types) {
  std::ostringstream out;
  PrintYaml(Sample(), out);
  BOOST_TEST(out.str() ==
             "bdf: \"0000:09:00.0\"\n"
             "model: K100_AI\n"
             "health: Healthy\n"
             "count: 8\n"
             "mig: false\n"
             "word: \"yes\"\n"
             "empty: \"\"\n"
             "ids:\n"
             "  - vdev0\n"
             "  - \"123\"\n");
}

BOOST_AUTO_TEST_CASE(table_aligns_columns_two_spaces_apart) {
  Table t({"ID", "MODEL"});
  t.AddRow({"0", "K100_AI"});
  t.AddRow({"10", "Z100L"});
  std::ostringstream out;
  t.Print(out);
  BOOST_TEST(out.str() == "ID  MODEL\n0   K100_AI\n10  Z100L\n");
}

BOOST_AUTO_TEST_CASE(output_format_names_accepted_values) {
  BOOST_TEST(ParseOutputFormat("json").ok());
  auto bad = ParseOutputFormat("xml");
  BOOST_REQUIRE(!bad.ok());
  BOOST_TEST(bad.status().message() == "-o: \"xml\" is not one of table, json, yaml");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcuctl
