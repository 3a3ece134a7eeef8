// hcuctl hami decode [--as ENCODING] VALUE | hami encode ENCODING RECORD...
// HAMi annotation strings (node registration, pod devices, container index,
// node lock, handshake, mark file names) to readable records and back.
// A record is written `name=value,name=value`; `hami decode -o json` prints
// the same names, so a decoded value can be edited and encoded again.
#include <algorithm>
#include <cctype>
#include <string>

#include "command.h"
#include "hami_readable.h"
#include "hcudp_cli/flags.h"

namespace hcuctl {
namespace {

Report DecodedReport(const hami::ReadableValue& decoded) {
  Report r;
  std::vector<std::string> headers;
  for (const hami::ReadableRecord& rec : decoded.records) {
    for (const hami::ReadableField& f : rec.fields) {
      if (std::find(headers.begin(), headers.end(), f.name) == headers.end()) {
        headers.push_back(f.name);
      }
    }
  }
  std::vector<std::string> upper;
  for (std::string h : headers) {
    for (char& c : h) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    upper.push_back(h);
  }
  Table table(upper);
  Value records = Value::MakeArray();
  for (const hami::ReadableRecord& rec : decoded.records) {
    Value obj = Value::MakeObject();
    std::vector<std::string> row;
    for (const std::string& h : headers) {
      const std::string* v = rec.Find(h);
      row.push_back(v == nullptr ? "" : *v);
      if (v != nullptr) obj.Set(h, *v);
    }
    table.AddRow(std::move(row));
    records.Push(std::move(obj));
  }
  std::string encoding(hami::EncodingName(decoded.encoding));
  r.value = Value::MakeObject().Set("encoding", encoding).Set("records", std::move(records));
  r.tables.emplace_back("encoding: " + encoding, std::move(table));
  return r;
}

// "name=value,name=value" -> a record; InvalidArgument names the bad part.
hcudp::StatusOr<hami::ReadableRecord> ParseRecord(const std::string& text) {
  hami::ReadableRecord rec;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string part = text.substr(start, comma == std::string::npos ? std::string::npos
                                                                      : comma - start);
    size_t eq = part.find('=');
    if (eq == std::string::npos || eq == 0) {
      return hcudp::InvalidArgumentError("record \"" + text + "\": \"" + part +
                                         "\" is not name=value");
    }
    rec.fields.push_back({part.substr(0, eq), part.substr(eq + 1)});
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return rec;
}

int Decode(Context& ctx, const Command& self, const std::string& as,
           const std::vector<std::string>& rest) {
  if (rest.size() != 2) return UsageError(ctx, self, "hami decode takes one value (quote it)");
  hcudp::StatusOr<hami::ReadableValue> decoded = hcudp::InvalidArgumentError("unset");
  if (as.empty()) {
    decoded = hami::DecodeAnyReadable(rest[1]);
  } else {
    auto encoding = hami::ParseEncoding(as);
    if (!encoding.ok()) return UsageError(ctx, self, encoding.status().message());
    decoded = hami::DecodeReadable(*encoding, rest[1]);
  }
  if (!decoded.ok()) return Fail(ctx, "hami decode", decoded.status());
  ctx.Print(DecodedReport(*decoded));
  return kExitOk;
}

int Encode(Context& ctx, const Command& self, const std::vector<std::string>& rest) {
  if (rest.size() < 2) {
    return UsageError(ctx, self, "hami encode needs an encoding and records name=value,...");
  }
  auto encoding = hami::ParseEncoding(rest[1]);
  if (!encoding.ok()) return UsageError(ctx, self, encoding.status().message());
  hami::ReadableValue value;
  value.encoding = *encoding;
  for (size_t i = 2; i < rest.size(); ++i) {
    auto rec = ParseRecord(rest[i]);
    if (!rec.ok()) return UsageError(ctx, self, rec.status().message());
    value.records.push_back(std::move(*rec));
  }
  auto encoded = hami::EncodeReadable(value);
  if (!encoded.ok()) return Fail(ctx, "hami encode", encoded.status());
  Report r;
  r.value = Value::MakeObject().Set("encoding", hami::EncodingName(*encoding)).Set("value",
                                                                                    *encoded);
  r.notes.push_back(*encoded);
  ctx.Print(r);
  return kExitOk;
}

int RunHami(Context& ctx, const std::vector<std::string>& args) {
  const Command& self = kHamiCommand;
  std::string as;
  hcudp::FlagSet flags("hcuctl hami", std::string(self.summary));
  flags.Add(hcudp::Flag::String(
      "as", "",
      "decode: the encoding (node-devices, pod-devices, container-devices, container-index, "
      "node-lock, handshake, mark-file); detected when omitted",
      &as));
  int code = kExitOk;
  auto rest = ParseCommandArgs(ctx, self, flags, args, &code);
  if (!rest) return code;
  if (rest->empty()) return UsageError(ctx, self, "missing action: decode or encode");
  if (rest->front() == "decode") return Decode(ctx, self, as, *rest);
  if (rest->front() == "encode") return Encode(ctx, self, *rest);
  return UsageError(ctx, self, "unknown action \"" + rest->front() + "\"; use decode or encode");
}

}  // namespace

const Command kHamiCommand = {
    "hami", "HAMi annotation values to readable records and back",
    "hcuctl hami decode [--as ENCODING] VALUE | hami encode ENCODING name=value,... ...", RunHami};

}  // namespace hcuctl
