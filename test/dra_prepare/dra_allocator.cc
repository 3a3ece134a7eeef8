#include "dra_prepare/dra_allocator.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <functional>
#include <optional>

#include "hcudp/dra/claim.h"

namespace hcudp::testing {
namespace {

using Value = rapidjson::Value;
constexpr int64_t kMiB = 1024 * 1024;

struct Alt {
  std::string name;  // "req" or "req/sub"
  int count = 1;
  std::optional<int64_t> cores;
  std::optional<int64_t> memory;
};

struct Choice {
  std::string request;
  size_t device;
  int64_t cores;
  int64_t memory;
};

StatusOr<Alt> ParseAlt(const Value& v, const std::string& name, const std::string& driver) {
  Alt alt;
  alt.name = name;
  if (v.HasMember("selectors")) return InvalidArgumentError(name + ": selectors not supported");
  if (v.HasMember("allocationMode") &&
      std::string(v["allocationMode"].GetString()) != "ExactCount") {
    return InvalidArgumentError(name + ": only allocationMode ExactCount");
  }
  if (!v.HasMember("deviceClassName") || driver != v["deviceClassName"].GetString()) {
    return InvalidArgumentError(name + ": deviceClassName must be " + driver);
  }
  if (v.HasMember("count")) alt.count = v["count"].GetInt();
  if (v.HasMember("capacity") && v["capacity"].HasMember("requests")) {
    for (auto& m : v["capacity"]["requests"].GetObject()) {
      HCUDP_ASSIGN_OR_RETURN(int64_t q, dra::ParseQuantity(m.value.GetString()));
      std::string key = m.name.GetString();
      if (key == "cores")
        alt.cores = q;
      else if (key == "memory")
        alt.memory = (q + kMiB - 1) / kMiB * kMiB;
      else
        return InvalidArgumentError(name + ": capacity " + key + " not supported");
    }
  }
  return alt;
}

}  // namespace

StatusOr<std::vector<AllocatorDevice>> DevicesFromSlices(const std::vector<std::string>& slices,
                                                         const std::string& driver) {
  std::vector<AllocatorDevice> out;
  for (const std::string& json : slices) {
    rapidjson::Document doc;
    doc.Parse(json.c_str());
    if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("spec") ||
        !doc["spec"].IsObject()) {
      return InvalidArgumentError("ResourceSlice: bad JSON or no spec");
    }
    const Value& spec = doc["spec"];
    if (!spec.HasMember("driver") || driver != spec["driver"].GetString()) continue;
    if (!spec.HasMember("devices")) continue;
    for (const Value& d : spec["devices"].GetArray()) {
      if (d.HasMember("taints") && d["taints"].IsArray() && !d["taints"].Empty()) continue;
      AllocatorDevice dev;
      dev.name = d["name"].GetString();
      dev.allow_multiple =
          d.HasMember("allowMultipleAllocations") && d["allowMultipleAllocations"].GetBool();
      if (d.HasMember("attributes")) {
        for (auto& a : d["attributes"].GetObject()) {
          std::string key = a.name.GetString();
          if (key.rfind(driver + "/", 0) == 0) key = key.substr(driver.size() + 1);
          const Value& v = a.value;
          std::string text;
          if (v.HasMember("string"))
            text = v["string"].GetString();
          else if (v.HasMember("version"))
            text = v["version"].GetString();
          else if (v.HasMember("int"))
            text = std::to_string(v["int"].GetInt64());
          else if (v.HasMember("bool"))
            text = v["bool"].GetBool() ? "true" : "false";
          else
            return InvalidArgumentError("attribute " + key + " of " + dev.name + ": no value");
          dev.attributes[key] = text;
        }
      }
      if (d.HasMember("capacity")) {
        for (auto& c : d["capacity"].GetObject()) {
          std::string key = c.name.GetString();
          HCUDP_ASSIGN_OR_RETURN(int64_t q, dra::ParseQuantity(c.value["value"].GetString()));
          if (key == "cores") dev.cores = q;
          if (key == "memory") dev.memory_bytes = q;
          if (key == "slices") dev.slices = q;
        }
      }
      out.push_back(std::move(dev));
    }
  }
  return out;
}

DraAllocator::DraAllocator(std::string driver, std::string pool,
                           std::vector<AllocatorDevice> devices)
    : driver_(std::move(driver)), pool_(std::move(pool)), devices_(std::move(devices)) {
  for (const auto& d : devices_) left_.push_back({d.cores, d.memory_bytes, false, 0});
}

StatusOr<std::string> DraAllocator::Allocate(const std::string& claim_json,
                                             const std::string& pod_uid) {
  rapidjson::Document doc;
  doc.Parse(claim_json.c_str());
  if (doc.HasParseError() || !doc.IsObject()) return InvalidArgumentError("claim: bad JSON");
  const Value& requests = doc["spec"]["devices"]["requests"];
  std::vector<std::vector<Alt>> alts;
  for (const Value& r : requests.GetArray()) {
    std::string name = r["name"].GetString();
    std::vector<Alt> options;
    if (r.HasMember("exactly")) {
      HCUDP_ASSIGN_OR_RETURN(Alt a, ParseAlt(r["exactly"], name, driver_));
      options.push_back(a);
    } else if (r.HasMember("firstAvailable")) {
      for (const Value& s : r["firstAvailable"].GetArray()) {
        HCUDP_ASSIGN_OR_RETURN(Alt a, ParseAlt(s, name + "/" + s["name"].GetString(), driver_));
        options.push_back(a);
      }
    } else {
      return InvalidArgumentError(name + ": neither exactly nor firstAvailable");
    }
    alts.push_back(options);
  }
  // matchAttribute constraints: attribute, request names (base) it binds.
  std::vector<std::pair<std::string, std::vector<std::string>>> constraints;
  const Value& devs = doc["spec"]["devices"];
  if (devs.HasMember("constraints")) {
    for (const Value& c : devs["constraints"].GetArray()) {
      if (!c.HasMember("matchAttribute")) return InvalidArgumentError("only matchAttribute");
      std::string attr = c["matchAttribute"].GetString();
      if (attr.rfind(driver_ + "/", 0) == 0) attr = attr.substr(driver_.size() + 1);
      std::vector<std::string> names;
      if (c.HasMember("requests")) {
        for (const Value& n : c["requests"].GetArray()) names.push_back(n.GetString());
      }
      constraints.push_back({attr, names});
    }
  }
  auto bound = [&](const std::string& request, const std::vector<std::string>& names) {
    std::string base = request.substr(0, request.find('/'));
    if (names.empty()) return true;
    for (const auto& n : names) {
      if (n == base || n == request) return true;
    }
    return false;
  };

  std::vector<Left> left = left_;
  std::vector<Choice> chosen;
  std::function<bool(size_t, size_t, size_t)> search = [&](size_t ri, size_t ai,
                                                           size_t slot) -> bool {
    if (ri == alts.size()) return true;
    const Alt& alt = alts[ri][ai];
    if (slot == static_cast<size_t>(alt.count)) return search(ri + 1, 0, 0);
    for (size_t d = 0; d < devices_.size(); ++d) {
      const AllocatorDevice& dev = devices_[d];
      bool used_here = false;
      for (size_t k = chosen.size() - slot; k < chosen.size(); ++k)
        used_here |= chosen[k].device == d;
      if (used_here) continue;
      int64_t cores = alt.cores.value_or(dev.cores);
      int64_t memory = alt.memory.value_or(dev.memory_bytes);
      if (!dev.allow_multiple) {
        if (alt.cores || alt.memory) continue;
        if (left[d].whole_taken || left[d].shares > 0) continue;
      } else if (left[d].whole_taken || cores > left[d].cores || memory > left[d].memory ||
                 cores > dev.cores || memory > dev.memory_bytes ||
                 (dev.slices > 0 && left[d].shares >= dev.slices)) {
        continue;
      }
      bool ok = true;
      for (const auto& [attr, names] : constraints) {
        if (!bound(alt.name, names)) continue;
        auto mine = dev.attributes.find(attr);
        if (mine == dev.attributes.end()) ok = false;
        for (const Choice& c : chosen) {
          if (!ok) break;
          if (!bound(c.request, names)) continue;
          auto theirs = devices_[c.device].attributes.find(attr);
          ok = theirs != devices_[c.device].attributes.end() && theirs->second == mine->second;
        }
      }
      if (!ok) continue;
      Left saved = left[d];
      if (!dev.allow_multiple) {
        left[d].whole_taken = true;
      } else {
        left[d].cores -= cores;
        left[d].memory -= memory;
        ++left[d].shares;
      }
      chosen.push_back({alt.name, d, cores, memory});
      if (search(ri, ai, slot + 1)) return true;
      chosen.pop_back();
      left[d] = saved;
    }
    // This alternative does not fit: the next one of a firstAvailable list.
    if (slot == 0 && ai + 1 < alts[ri].size()) return search(ri, ai + 1, 0);
    return false;
  };
  if (!search(0, 0, 0)) return ResourceExhaustedError("claim does not fit the node");
  left_ = left;

  auto& a = doc.GetAllocator();
  Value results(rapidjson::kArrayType);
  for (const Choice& c : chosen) {
    const AllocatorDevice& dev = devices_[c.device];
    Value r(rapidjson::kObjectType);
    r.AddMember("request", Value(c.request.c_str(), a), a);
    r.AddMember("driver", Value(driver_.c_str(), a), a);
    r.AddMember("pool", Value(pool_.c_str(), a), a);
    r.AddMember("device", Value(dev.name.c_str(), a), a);
    if (dev.allow_multiple) {
      std::string share = "share-" + std::to_string(next_share_++);
      r.AddMember("shareID", Value(share.c_str(), a), a);
      Value cap(rapidjson::kObjectType);
      cap.AddMember("cores", Value(std::to_string(c.cores).c_str(), a), a);
      cap.AddMember("memory", Value(std::to_string(c.memory).c_str(), a), a);
      cap.AddMember("slices", Value("1", a), a);
      r.AddMember("consumedCapacity", cap, a);
    }
    results.PushBack(r, a);
  }
  Value devices(rapidjson::kObjectType);
  devices.AddMember("results", results, a);
  Value allocation(rapidjson::kObjectType);
  allocation.AddMember("devices", devices, a);
  Value reserved(rapidjson::kArrayType);
  Value pod(rapidjson::kObjectType);
  pod.AddMember("resource", "pods", a);
  pod.AddMember("name", "pod", a);
  pod.AddMember("uid", Value(pod_uid.c_str(), a), a);
  reserved.PushBack(pod, a);
  Value status(rapidjson::kObjectType);
  status.AddMember("allocation", allocation, a);
  status.AddMember("reservedFor", reserved, a);
  doc.RemoveMember("status");
  doc.AddMember("status", status, a);
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  doc.Accept(w);
  return std::string(buffer.GetString(), buffer.GetSize());
}

void DraAllocator::Free(const std::string& allocated_claim_json) {
  rapidjson::Document doc;
  doc.Parse(allocated_claim_json.c_str());
  for (const Value& r : doc["status"]["allocation"]["devices"]["results"].GetArray()) {
    for (size_t d = 0; d < devices_.size(); ++d) {
      if (devices_[d].name != r["device"].GetString()) continue;
      if (!devices_[d].allow_multiple) {
        left_[d].whole_taken = false;
        continue;
      }
      left_[d].cores += *dra::ParseQuantity(r["consumedCapacity"]["cores"].GetString());
      left_[d].memory += *dra::ParseQuantity(r["consumedCapacity"]["memory"].GetString());
      --left_[d].shares;
    }
  }
}

}  // namespace hcudp::testing
