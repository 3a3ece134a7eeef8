#include "output.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <rapidjson/ostreamwrapper.h>
#include <rapidjson/prettywriter.h>

namespace hcuctl {

hcudp::StatusOr<OutputFormat> ParseOutputFormat(std::string_view text) {
  if (text == "table") return OutputFormat::kTable;
  if (text == "json") return OutputFormat::kJson;
  if (text == "yaml") return OutputFormat::kYaml;
  return hcudp::InvalidArgumentError("-o: \"" + std::string(text) +
                                     "\" is not one of table, json, yaml");
}

Value& Value::Set(std::string key, Value value) {
  std::get<Object>(v_).emplace_back(std::move(key), std::move(value));
  return *this;
}

Value& Value::Push(Value value) {
  std::get<Array>(v_).push_back(std::move(value));
  return *this;
}

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

void Table::Print(std::ostream& out) const {
  std::vector<size_t> width(headers_.size(), 0);
  for (size_t i = 0; i < headers_.size(); ++i) width[i] = headers_[i].size();
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  auto print_row = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t i = 0; i < cells.size(); ++i) {
      line += cells[i];
      if (i + 1 < cells.size()) line += std::string(width[i] - cells[i].size() + 2, ' ');
    }
    out << line << "\n";
  };
  print_row(headers_);
  for (const auto& row : rows_) print_row(row);
}

namespace {

// A string may be emitted unquoted only when YAML 1.1 and 1.2 readers both
// read it back as that same string: a word starting with a letter or '/',
// made of [A-Za-z0-9._/()-], and not a boolean or null spelling.
bool IsPlainYamlString(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '/')) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string_view("._/()-").find(c) ==
                                                            std::string_view::npos) {
      return false;
    }
  }
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* word : {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}) {
    if (lower == word) return false;
  }
  return true;
}

template <typename Writer>
void WriteJson(const Value& value, Writer& w) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>) {
          w.Null();
        } else if constexpr (std::is_same_v<T, bool>) {
          w.Bool(v);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          w.Int64(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
        } else if constexpr (std::is_same_v<T, Value::Array>) {
          w.StartArray();
          for (const Value& e : v) WriteJson(e, w);
          w.EndArray();
        } else {
          w.StartObject();
          for (const auto& [k, e] : v) {
            w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
            WriteJson(e, w);
          }
          w.EndObject();
        }
      },
      value.raw());
}

void WriteYaml(const Value& value, YAML::Emitter& e) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>) {
          e << YAML::Null;
        } else if constexpr (std::is_same_v<T, bool>) {
          e << v;
        } else if constexpr (std::is_same_v<T, int64_t>) {
          e << v;
        } else if constexpr (std::is_same_v<T, std::string>) {
          bool plain_ok = IsPlainYamlString(v);
          if (plain_ok) {
            e << v;
          } else {
            e << YAML::DoubleQuoted << v;
          }
        } else if constexpr (std::is_same_v<T, Value::Array>) {
          if (v.empty()) {
            e << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
            return;
          }
          e << YAML::BeginSeq;
          for (const Value& item : v) WriteYaml(item, e);
          e << YAML::EndSeq;
        } else {
          if (v.empty()) {
            e << YAML::Flow << YAML::BeginMap << YAML::EndMap;
            return;
          }
          e << YAML::BeginMap;
          for (const auto& [k, item] : v) {
            e << YAML::Key << k << YAML::Value;
            WriteYaml(item, e);
          }
          e << YAML::EndMap;
        }
      },
      value.raw());
}

}  // namespace

void PrintJson(const Value& value, std::ostream& out) {
  rapidjson::OStreamWrapper os(out);
  rapidjson::PrettyWriter<rapidjson::OStreamWrapper> w(os);
  w.SetIndent(' ', 2);
  WriteJson(value, w);
  out << "\n";
}

void PrintJsonLine(const Value& value, std::ostream& out) {
  rapidjson::OStreamWrapper os(out);
  rapidjson::Writer<rapidjson::OStreamWrapper> w(os);
  WriteJson(value, w);
  out << "\n";
}

void PrintYaml(const Value& value, std::ostream& out) {
  YAML::Emitter e;
  WriteYaml(value, e);
  out << e.c_str() << "\n";
}

void PrintReport(const Report& report, OutputFormat format, std::ostream& out) {
  switch (format) {
    case OutputFormat::kJson:
      PrintJson(report.value, out);
      return;
    case OutputFormat::kYaml:
      PrintYaml(report.value, out);
      return;
    case OutputFormat::kTable:
      break;
  }
  bool first = true;
  for (const auto& [title, table] : report.tables) {
    if (!first) out << "\n";
    first = false;
    if (!title.empty()) out << title << "\n";
    table.Print(out);
  }
  for (const std::string& note : report.notes) out << note << "\n";
}

}  // namespace hcuctl
