// One sync of the node's ResourceSlice pool: LIST, compare, write.
#include "dra/slice_sync.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <string>
#include <vector>

#include "hcudp/dra/slice_publisher.h"
#include "hcudp_internal/log.h"
#include "kube/watch_event.h"

namespace hcudp::dra {
namespace {

using Document = rapidjson::Document;
using Value = rapidjson::Value;

// A slice of this driver on this node, as stored.
struct Stored {
  std::string name, uid, resource_version, pool;
  std::string owner_uid;  // of the Node ownerReference; empty: none
  int64_t generation = 0;
  int64_t slice_count = 0;
  Value devices;  // owned by `doc` of the list
};

const Value* MemberIfObject(const Value& obj, const char* key) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(key);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

Value* MutableMember(Value& obj, const char* key) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(key);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

std::string StringAt(const Value& obj, const char* key) {
  const Value* v = MemberIfObject(obj, key);
  return v != nullptr && v->IsString() ? std::string(v->GetString(), v->GetStringLength()) : "";
}

StatusOr<std::vector<Stored>> ParseList(const std::string& json, Document& doc) {
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return InternalError("ResourceSlice list from the API server is not a JSON object");
  }
  Value* items = MutableMember(doc, "items");
  if (items == nullptr || !(items->IsArray() || items->IsNull())) {
    return InternalError("ResourceSlice list from the API server has no items array");
  }
  std::vector<Stored> out;
  if (items->IsNull()) return out;
  for (Value& item : items->GetArray()) {
    const Value* meta = MemberIfObject(item, "metadata");
    Value* spec = MutableMember(item, "spec");
    const Value* pool = spec != nullptr ? MemberIfObject(*spec, "pool") : nullptr;
    if (meta == nullptr || spec == nullptr || pool == nullptr) {
      return InternalError("a ResourceSlice from the API server lacks metadata, spec or spec.pool");
    }
    Stored s;
    s.name = StringAt(*meta, "name");
    s.uid = StringAt(*meta, "uid");
    s.resource_version = StringAt(*meta, "resourceVersion");
    s.pool = StringAt(*pool, "name");
    const Value* owners = MemberIfObject(*meta, "ownerReferences");
    if (owners != nullptr && owners->IsArray()) {
      for (const Value& o : owners->GetArray()) {
        if (StringAt(o, "kind") == "Node") s.owner_uid = StringAt(o, "uid");
      }
    }
    const Value* gen = MemberIfObject(*pool, "generation");
    const Value* count = MemberIfObject(*pool, "resourceSliceCount");
    if (s.name.empty() || gen == nullptr || !gen->IsInt64() || count == nullptr ||
        !count->IsInt64()) {
      return InternalError("ResourceSlice \"" + s.name +
                           "\" from the API server lacks metadata.name, spec.pool.generation or "
                           "spec.pool.resourceSliceCount");
    }
    s.generation = gen->GetInt64();
    s.slice_count = count->GetInt64();
    Value* devices = MutableMember(*spec, "devices");
    if (devices != nullptr && devices->IsArray()) {
      s.devices = std::move(*devices);
    } else {
      s.devices.SetArray();
    }
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(),
            [](const Stored& a, const Stored& b) { return a.name < b.name; });
  return out;
}

// A device as compared: the server's timeAdded on taints does not count, and
// neither do fields the server is known to drop.
void Normalize(Value& device, const SyncMemory& memory) {
  if (!device.IsObject()) return;
  auto taints = device.FindMember("taints");
  if (taints != device.MemberEnd() && taints->value.IsArray()) {
    for (Value& t : taints->value.GetArray()) {
      if (t.IsObject()) t.RemoveMember("timeAdded");
    }
  }
  if (memory.consumable_capacity_dropped) {
    device.RemoveMember("allowMultipleAllocations");
    auto cap = device.FindMember("capacity");
    if (cap != device.MemberEnd() && cap->value.IsObject()) {
      for (auto& c : cap->value.GetObject()) {
        if (c.value.IsObject()) c.value.RemoveMember("requestPolicy");
      }
    }
  }
}

// The devices of slice `index` of the plan, normalized.
void DesiredDevices(const PoolPlan& plan, int index, const SyncMemory& memory, Document& out) {
  out.SetArray();
  for (const PoolDevice& d : plan.devices) {
    if (d.slice != index) continue;
    Document dev(&out.GetAllocator());
    dev.Parse(d.json.data(), d.json.size());
    Normalize(dev, memory);
    out.PushBack(Value(dev, out.GetAllocator()), out.GetAllocator());
  }
}

bool UpToDate(std::vector<Stored>& stored, const PoolPlan& plan, const SyncMemory& memory,
              Document::AllocatorType& alloc) {
  if (static_cast<int>(stored.size()) != plan.slice_count) return false;
  // A re-created Node (another UID), or slices written while its UID could
  // not be read: the owner is rewritten, else GC deletes the slices (or they
  // outlive the Node).
  for (const Stored& s : stored) {
    if (s.owner_uid != plan.node_uid) return false;
  }
  const int64_t generation = stored.front().generation;
  std::vector<bool> used(stored.size(), false);
  for (int i = 0; i < plan.slice_count; ++i) {
    Document want;
    DesiredDevices(plan, i, memory, want);
    bool found = false;
    for (size_t k = 0; k < stored.size() && !found; ++k) {
      Stored& s = stored[k];
      if (used[k] || s.generation != generation || s.slice_count != plan.slice_count ||
          s.pool != plan.pool_name) {
        continue;
      }
      Value have(s.devices, alloc);
      for (Value& d : have.GetArray()) Normalize(d, memory);
      if (have == want) used[k] = found = true;
    }
    if (!found) return false;
  }
  return true;
}

// Copies timeAdded of taints the stored pool already has (same device, same
// key and effect), as the Kubernetes helper does.
void KeepTaintTimes(Value& devices, const std::vector<Stored>& stored,
                    Document::AllocatorType& alloc) {
  for (Value& d : devices.GetArray()) {
    auto taints = d.FindMember("taints");
    if (taints == d.MemberEnd() || !taints->value.IsArray()) continue;
    const std::string name = StringAt(d, "name");
    for (const Stored& s : stored) {
      for (const Value& old : s.devices.GetArray()) {
        const Value* old_taints = MemberIfObject(old, "taints");
        if (StringAt(old, "name") != name || old_taints == nullptr || !old_taints->IsArray()) {
          continue;
        }
        for (Value& t : taints->value.GetArray()) {
          for (const Value& ot : old_taints->GetArray()) {
            const Value* time = MemberIfObject(ot, "timeAdded");
            if (time != nullptr && !MemberIfObject(t, "timeAdded") &&
                StringAt(ot, "key") == StringAt(t, "key") &&
                StringAt(ot, "effect") == StringAt(t, "effect")) {
              t.AddMember("timeAdded", Value(*time, alloc), alloc);
            }
          }
        }
      }
    }
  }
}

struct Dropped {
  bool taints = false;
  bool consumable = false;
};

// Compares a write's answer (the stored object) with what was sent.
Dropped FindDropped(const Value& sent_devices, const std::string& answer) {
  Dropped out;
  Document doc;
  doc.Parse(answer.data(), answer.size());
  const Value* spec = doc.IsObject() ? MemberIfObject(doc, "spec") : nullptr;
  const Value* got = spec != nullptr ? MemberIfObject(*spec, "devices") : nullptr;
  if (got == nullptr || !got->IsArray()) {
    if (!sent_devices.Empty()) LOG(WARNING) << "ResourceSlice answer carries no devices";
    return out;
  }
  for (const Value& sent : sent_devices.GetArray()) {
    const std::string name = StringAt(sent, "name");
    for (const Value& g : got->GetArray()) {
      if (StringAt(g, "name") != name) continue;
      if (MemberIfObject(sent, "taints") != nullptr && MemberIfObject(g, "taints") == nullptr) {
        out.taints = true;
      }
      if (MemberIfObject(sent, "allowMultipleAllocations") != nullptr &&
          MemberIfObject(g, "allowMultipleAllocations") == nullptr) {
        out.consumable = true;
      }
    }
  }
  return out;
}

// DELETE with uid + resourceVersion preconditions; already gone is fine.
Status DeleteSlice(KubeClient& client, const Stored& s, const CallOptions& call,
                   SyncResult& result) {
  DeleteOptions del;
  del.precondition_uid = s.uid;
  del.precondition_resource_version = s.resource_version;
  auto gone = client.Delete(ResourceSlicePath(s.name), del, call);
  if (!gone.ok() && !IsNotFound(gone.status())) {
    return gone.status().WithContext("delete ResourceSlice " + s.name);
  }
  result.written.emplace_back(s.name, "");
  return OkStatus();
}

// metadata.name of a write's answer.
std::string AnswerName(const std::string& answer) {
  Document doc;
  doc.Parse(answer.data(), answer.size());
  const Value* meta = doc.HasParseError() ? nullptr : MemberIfObject(doc, "metadata");
  return meta != nullptr ? StringAt(*meta, "name") : "";
}

// Writes the plan at `generation` over `stored`: PUT slice i over stored[i],
// POST the rest, DELETE the surplus. Returns the writes made.
StatusOr<int> WritePool(KubeClient& client, const PoolPlan& plan, int64_t generation,
                        const std::vector<Stored>& stored, Dropped& dropped,
                        const CallOptions& call, SyncResult& result) {
  int writes = 0;
  for (int i = 0; i < plan.slice_count; ++i) {
    Document obj;
    const std::string json = SliceObjectJson(plan, i, generation);
    obj.Parse(json.data(), json.size());
    Value& devices = obj["spec"]["devices"];
    KeepTaintTimes(devices, stored, obj.GetAllocator());
    StatusOr<std::string> answer = InternalError("unreached");
    if (i < static_cast<int>(stored.size())) {
      const Stored& s = stored[i];
      Value& meta = obj["metadata"];
      meta.RemoveMember("generateName");
      meta.AddMember("name", Value(s.name.c_str(), obj.GetAllocator()), obj.GetAllocator());
      meta.AddMember("uid", Value(s.uid.c_str(), obj.GetAllocator()), obj.GetAllocator());
      meta.AddMember("resourceVersion", Value(s.resource_version.c_str(), obj.GetAllocator()),
                     obj.GetAllocator());
      answer = client.Update(ResourceSlicePath(s.name), kube::JsonText(obj), call);
      if (!answer.ok()) {
        return answer.status().WithContext("update ResourceSlice " + s.name);
      }
    } else {
      // generateName: a POST the server may have applied (its answer lost)
      // is never repeated by the client; the next sync LISTs and sees it.
      answer = client.Create(ResourceSlicesPath(), kube::JsonText(obj), call);
      if (!answer.ok()) return answer.status().WithContext("create ResourceSlice");
    }
    ++writes;
    const std::string name = AnswerName(*answer);
    if (!name.empty()) result.written.emplace_back(name, *answer);
    Dropped d = FindDropped(devices, *answer);
    dropped.taints = dropped.taints || d.taints;
    dropped.consumable = dropped.consumable || d.consumable;
  }
  for (size_t k = static_cast<size_t>(plan.slice_count); k < stored.size(); ++k) {
    HCUDP_RETURN_IF_ERROR(DeleteSlice(client, stored[k], call, result));
    ++writes;
  }
  return writes;
}

}  // namespace

ResourcePath ResourceSlicesPath() {
  ResourcePath p;
  p.api_prefix = "/apis/resource.k8s.io/v1";
  p.resource = "resourceslices";
  return p;
}

ResourcePath ResourceSlicePath(std::string name) {
  ResourcePath p = ResourceSlicesPath();
  p.name = std::move(name);
  return p;
}

Status SyncPool(KubeClient& client, const SliceOffer& inventory, const SliceParams& params,
                SyncMemory& memory, const CallOptions& call,
                const std::optional<std::string>& snapshot, SyncResult& result) {
  ListOptions list;
  list.field_selector = "spec.nodeName=" + params.node_name + ",spec.driver=" + params.driver_name;
  Status last = OkStatus();
  for (int round = 0; round < 4; ++round) {
    SliceParams p = params;
    p.taints_supported = params.taints_supported && !memory.taints_dropped;
    HCUDP_ASSIGN_OR_RETURN(PoolPlan plan, BuildPoolPlan(inventory, p));
    std::string json;
    if (round == 0 && snapshot) {
      json = *snapshot;  // the watched copy: no LIST while the watch is healthy
    } else {
      HCUDP_ASSIGN_OR_RETURN(json, client.List(ResourceSlicesPath(), list, call));
    }
    Document doc;
    HCUDP_ASSIGN_OR_RETURN(std::vector<Stored> all, ParseList(json, doc));
    // Slices of another pool name (pool.name is immutable) are deleted, not
    // reused.
    std::vector<Stored> stored, foreign;
    for (Stored& s : all) (s.pool == plan.pool_name ? stored : foreign).push_back(std::move(s));
    int64_t highest = memory.last_generation;
    for (const Stored& s : stored) highest = std::max(highest, s.generation);
    result.slices = plan.slice_count;
    result.devices = static_cast<int>(plan.devices.size());
    if (!stored.empty() && foreign.empty() && UpToDate(stored, plan, memory, doc.GetAllocator())) {
      memory.last_generation = highest;
      result.generation = stored.front().generation;
      return OkStatus();
    }
    const int64_t generation = highest + 1;
    Dropped dropped;
    StatusOr<int> writes = WritePool(client, plan, generation, stored, dropped, call, result);
    if (writes.ok()) {
      for (const Stored& f : foreign) {
        Status gone = DeleteSlice(client, f, call, result);
        if (!gone.ok()) {
          writes = gone;
          break;
        }
        result.writes += 1;
      }
    }
    if (writes.ok()) {
      result.writes += *writes;
      memory.last_generation = generation;
      result.generation = generation;
    }
    if (dropped.consumable && !memory.consumable_capacity_dropped) {
      LOG(WARNING) << "the API server dropped allowMultipleAllocations/requestPolicy from "
                      "ResourceSlices: DRAConsumableCapacity is off; vHCUs by capacity "
                      "cannot be allocated";
      memory.consumable_capacity_dropped = true;
    }
    if (dropped.taints && !memory.taints_dropped) {
      LOG(WARNING) << "the API server dropped device taints from ResourceSlices "
                      "(DRADeviceTaints off): unhealthy cards are left out of the pool instead";
      memory.taints_dropped = true;
      continue;  // republish without the unhealthy cards
    }
    if (writes.ok()) return OkStatus();
    last = writes.status();
    // A conflict (someone else wrote, or kubelet deleted a slice under us):
    // re-list and try again; anything else is the caller's to retry.
    if (!(IsConflict(last) || IsAlreadyExists(last) || IsNotFound(last))) return last;
    VLOG(1) << "ResourceSlice sync conflict, re-listing: " << last.ToString();
  }
  return last;
}

}  // namespace hcudp::dra
