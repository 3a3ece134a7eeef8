// What hcuctl prints: a command builds a Value tree (for -o json|yaml) and a
// Table (for -o table); Print renders the one the user asked for.
#ifndef HCUCTL_OUTPUT_H_
#define HCUCTL_OUTPUT_H_

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "hcudp/status.h"

namespace hcuctl {

enum class OutputFormat { kTable, kJson, kYaml };

hcudp::StatusOr<OutputFormat> ParseOutputFormat(std::string_view text);

// A JSON-like value. Objects keep insertion order so output is stable.
class Value {
 public:
  using Array = std::vector<Value>;
  using Object = std::vector<std::pair<std::string, Value>>;

  Value() : v_(nullptr) {}
  Value(bool b) : v_(b) {}                                           // NOLINT
  Value(int i) : v_(static_cast<int64_t>(i)) {}                      // NOLINT
  Value(int64_t i) : v_(i) {}                                        // NOLINT
  Value(uint64_t i) : v_(static_cast<int64_t>(i)) {}                 // NOLINT
  Value(const char* s) : v_(std::string(s)) {}                       // NOLINT
  Value(std::string s) : v_(std::move(s)) {}                         // NOLINT
  Value(std::string_view s) : v_(std::string(s)) {}                  // NOLINT
  Value(Array a) : v_(std::move(a)) {}                               // NOLINT
  Value(Object o) : v_(std::move(o)) {}                              // NOLINT

  static Value MakeArray() { return Value(Array{}); }
  static Value MakeObject() { return Value(Object{}); }

  // On an object: appends a member (keys are not de-duplicated).
  Value& Set(std::string key, Value value);
  // On an array: appends an element.
  Value& Push(Value value);

  const std::variant<std::nullptr_t, bool, int64_t, std::string, Array, Object>& raw() const {
    return v_;
  }

 private:
  std::variant<std::nullptr_t, bool, int64_t, std::string, Array, Object> v_;
};

// Left-aligned text columns separated by two spaces, header in upper case.
class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void AddRow(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }
  void Print(std::ostream& out) const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

void PrintJson(const Value& value, std::ostream& out);
// One line of compact JSON (JSON Lines), for commands that stream events.
void PrintJsonLine(const Value& value, std::ostream& out);
void PrintYaml(const Value& value, std::ostream& out);

// Everything a command prints: tables with optional titles, or a value.
struct Report {
  Value value;
  // (title, table) pairs printed in order for -o table; an empty title
  // prints no heading line.
  std::vector<std::pair<std::string, Table>> tables;
  // Extra lines printed after the tables in -o table mode.
  std::vector<std::string> notes;
};

void PrintReport(const Report& report, OutputFormat format, std::ostream& out);

}  // namespace hcuctl

#endif  // HCUCTL_OUTPUT_H_
