// ResourceSlice objects (resource.k8s.io/v1) of a pool plan, and quantities
// in the canonical form the API server stores.
#include <string>

#include "dra/slice_writer.h"
#include "hcudp/dra/slices.h"

namespace hcudp::dra {
namespace {

using Writer = internal::SliceWriter;
using internal::WriteString;

std::string GenerateName(const PoolPlan& plan) {
  // "<node>-<driver>-": a DNS subdomain; the server appends 5 characters, so
  // the prefix is cut to leave room within 253.
  std::string prefix = plan.node_name + "-" + plan.driver_name;
  if (prefix.size() > 247) prefix.resize(247);
  while (!prefix.empty() && (prefix.back() == '-' || prefix.back() == '.')) prefix.pop_back();
  return prefix + "-";
}

void WriteSlice(Writer& w, const PoolPlan& plan, int index, int64_t generation) {
  w.StartObject();
  w.Key("apiVersion");
  w.String("resource.k8s.io/v1");
  w.Key("kind");
  w.String("ResourceSlice");
  w.Key("metadata");
  w.StartObject();
  w.Key("generateName");
  WriteString(w, GenerateName(plan));
  if (!plan.node_uid.empty()) {
    w.Key("ownerReferences");
    w.StartArray();
    w.StartObject();
    w.Key("apiVersion");
    w.String("v1");
    w.Key("kind");
    w.String("Node");
    w.Key("name");
    WriteString(w, plan.node_name);
    w.Key("uid");
    WriteString(w, plan.node_uid);
    w.Key("controller");
    w.Bool(true);
    w.EndObject();
    w.EndArray();
  }
  w.EndObject();
  w.Key("spec");
  w.StartObject();
  w.Key("driver");
  WriteString(w, plan.driver_name);
  w.Key("nodeName");
  WriteString(w, plan.node_name);
  w.Key("pool");
  w.StartObject();
  w.Key("name");
  WriteString(w, plan.pool_name);
  w.Key("generation");
  w.Int64(generation);
  w.Key("resourceSliceCount");
  w.Int64(plan.slice_count);
  w.EndObject();
  w.Key("devices");
  w.StartArray();
  for (const PoolDevice& d : plan.devices) {
    if (d.slice != index) continue;
    w.RawValue(d.json.data(), d.json.size(), rapidjson::kObjectType);
  }
  w.EndArray();
  w.EndObject();
  w.EndObject();
}

std::string Suffixed(uint64_t value, uint64_t base, const char* const* suffixes, int n) {
  int s = 0;
  while (value != 0 && s < n && value % base == 0) {
    value /= base;
    ++s;
  }
  return std::to_string(value) + suffixes[s];
}

}  // namespace

std::string BinaryQuantity(uint64_t bytes) {
  // Below 1024 the API server writes a binary quantity as a decimal one.
  if (bytes < 1024) return DecimalQuantity(bytes);
  static const char* const kSuffixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  return Suffixed(bytes, 1024, kSuffixes, 6);
}

std::string DecimalQuantity(uint64_t value) {
  static const char* const kSuffixes[] = {"", "k", "M", "G", "T", "P", "E"};
  return Suffixed(value, 1000, kSuffixes, 6);
}

std::string SliceObjectJson(const PoolPlan& plan, int index, int64_t generation) {
  rapidjson::StringBuffer b;
  Writer w(b);
  WriteSlice(w, plan, index, generation);
  return std::string(b.GetString(), b.GetSize());
}

std::string SliceListJson(const PoolPlan& plan, int64_t generation) {
  rapidjson::StringBuffer b;
  Writer w(b);
  w.StartObject();
  w.Key("apiVersion");
  w.String("resource.k8s.io/v1");
  w.Key("kind");
  w.String("ResourceSliceList");
  w.Key("items");
  w.StartArray();
  for (int i = 0; i < plan.slice_count; ++i) WriteSlice(w, plan, i, generation);
  w.EndArray();
  w.EndObject();
  return std::string(b.GetString(), b.GetSize());
}

}  // namespace hcudp::dra
