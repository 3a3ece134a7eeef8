// Any HAMi value <-> named fields, for hcuctl's `hami decode` / `hami encode`.
#include "hami_readable.h"

#include <functional>

#include "hcudp/hami/container_index.h"
#include "hcudp/hami/handshake.h"
#include "hcudp/hami/keys.h"
#include "hcudp/hami/mark_file.h"
#include "hcudp/hami/node_devices.h"
#include "hcudp/hami/node_lock.h"
#include "hcudp/hami/pod_devices.h"
#include "hcudp/hami/rfc3339.h"
#include "hcudp_internal/strict_text.h"

namespace hcuctl::hami {
namespace {

using namespace hcudp::hami;  // NOLINT(build/namespaces): the codec this file reads and writes
using hcudp::InvalidArgumentError;
using hcudp::Status;
using hcudp::text::ParseGoBool;
using hcudp::text::ParseInt;
using hcudp::text::Quote;

constexpr struct {
  Encoding encoding;
  std::string_view name;
} kEncodingNames[] = {
    {Encoding::kNodeDevices, "node-devices"},
    {Encoding::kPodDevices, "pod-devices"},
    {Encoding::kContainerDevices, "container-devices"},
    {Encoding::kContainerIndex, "container-index"},
    {Encoding::kNodeLock, "node-lock"},
    {Encoding::kHandshake, "handshake"},
    {Encoding::kMarkFileName, "mark-file"},
};

ReadableRecord DeviceRecord(const ContainerDevice& d) {
  return {{{"uuid", d.uuid},
           {"type", d.type},
           {"used_mem_mib", std::to_string(d.used_mem_mib)},
           {"used_cores_percent", std::to_string(d.used_cores_percent)}}};
}

ReadableValue FromNodeDevices(const std::vector<NodeDevice>& devices) {
  ReadableValue v{Encoding::kNodeDevices, {}};
  for (const NodeDevice& d : devices) {
    v.records.push_back({{{"id", d.id},
                          {"count", std::to_string(d.count)},
                          {"devmem_mib", std::to_string(d.devmem_mib)},
                          {"devcore_percent", std::to_string(d.devcore_percent)},
                          {"type", d.type},
                          {"numa", std::to_string(d.numa)},
                          {"healthy", d.healthy ? "true" : "false"},
                          {"index", std::to_string(d.index)},
                          {"mode", d.mode}}});
  }
  return v;
}

ReadableValue FromPodDevices(const PodDevices& pod) {
  ReadableValue v{Encoding::kPodDevices, {}};
  for (size_t c = 0; c < pod.size(); ++c) {
    if (pod[c].empty()) {
      v.records.push_back({{{"container", std::to_string(c)}}});
      continue;
    }
    for (const ContainerDevice& d : pod[c]) {
      ReadableRecord r = DeviceRecord(d);
      r.fields.insert(r.fields.begin(), {"container", std::to_string(c)});
      v.records.push_back(std::move(r));
    }
  }
  return v;
}

StatusOr<ReadableValue> Decode(Encoding encoding, std::string_view value) {
  switch (encoding) {
    case Encoding::kNodeDevices: {
      HCUDP_ASSIGN_OR_RETURN(auto devices, DecodeNodeDevices(value));
      return FromNodeDevices(devices);
    }
    case Encoding::kPodDevices: {
      HCUDP_ASSIGN_OR_RETURN(auto pod, DecodePodDevices(value));
      return FromPodDevices(pod);
    }
    case Encoding::kContainerDevices: {
      HCUDP_ASSIGN_OR_RETURN(auto devices, DecodeContainerDevices(value));
      ReadableValue v{encoding, {}};
      for (const ContainerDevice& d : devices) v.records.push_back(DeviceRecord(d));
      return v;
    }
    case Encoding::kContainerIndex: {
      HCUDP_ASSIGN_OR_RETURN(auto indexes, DecodeContainerIndex(value));
      ReadableValue v{encoding, {}};
      for (int i : indexes) v.records.push_back({{{"index", std::to_string(i)}}});
      return v;
    }
    case Encoding::kNodeLock: {
      HCUDP_ASSIGN_OR_RETURN(NodeLock lock, ParseNodeLock(value));
      return ReadableValue{encoding,
                           {{{{"time", lock.time_text},
                              {"namespace", lock.pod_namespace},
                              {"pod", lock.pod_name}}}}};
    }
    case Encoding::kHandshake: {
      HCUDP_ASSIGN_OR_RETURN(Handshake h, ParseHandshake(value));
      return ReadableValue{
          encoding,
          {{{{"state", std::string(HandshakeStateName(h.state))}, {"time", h.time_text}}}}};
    }
    case Encoding::kMarkFileName: {
      HCUDP_ASSIGN_OR_RETURN(MarkFileName m, ParseMarkFileName(value));
      return ReadableValue{encoding,
                           {{{{"pod_uid", m.pod_uid},
                              {"container", m.container},
                              {"card", std::to_string(m.card)},
                              {"vhcu_id", std::to_string(m.vhcu_id)}}}}};
    }
  }
  return InvalidArgumentError("unknown encoding");
}

// Reads named fields of one record; remembers the first error.
class FieldReader {
 public:
  FieldReader(const ReadableRecord& record, size_t n) : record_(record), n_(n) {}

  std::string Text(std::string_view name, std::string fallback, bool required = true) {
    const std::string* v = record_.Find(name);
    if (v != nullptr) return *v;
    if (required) Fail(std::string("missing field ") + std::string(name));
    return fallback;
  }
  int64_t Int(std::string_view name, int64_t min, int64_t max, int64_t fallback,
              bool required = true) {
    const std::string* v = record_.Find(name);
    if (v == nullptr) {
      if (required) Fail("missing field " + std::string(name));
      return fallback;
    }
    auto parsed = ParseInt(*v, min, max);
    if (!parsed) {
      Fail("field " + std::string(name) + " " + Quote(*v) + " is not an integer in " +
           std::to_string(min) + ".." + std::to_string(max));
      return fallback;
    }
    return *parsed;
  }
  const Status& status() const { return status_; }

 private:
  void Fail(const std::string& message) {
    if (status_.ok())
      status_ = InvalidArgumentError("record " + std::to_string(n_) + ": " + message);
  }
  const ReadableRecord& record_;
  size_t n_;
  Status status_;
};

constexpr int64_t kInt32Max = 2147483647;

ContainerDevice ReadDevice(FieldReader& r) {
  ContainerDevice d;
  d.uuid = r.Text("uuid", "");
  d.type = r.Text("type", std::string(kPodDeviceType), /*required=*/false);
  d.used_mem_mib = static_cast<int32_t>(r.Int("used_mem_mib", 0, kInt32Max, 0));
  d.used_cores_percent = static_cast<int32_t>(r.Int("used_cores_percent", 0, 100, 0));
  return d;
}

StatusOr<std::string> EncodeRecords(const ReadableValue& value) {
  const auto& records = value.records;
  switch (value.encoding) {
    case Encoding::kNodeDevices: {
      std::vector<NodeDevice> devices;
      for (size_t n = 0; n < records.size(); ++n) {
        FieldReader r(records[n], n);
        NodeDevice d;
        d.id = r.Text("id", "");
        d.count = static_cast<int32_t>(r.Int("count", -kInt32Max, kInt32Max, 0));
        d.devmem_mib = static_cast<int32_t>(r.Int("devmem_mib", 0, kInt32Max, 0));
        d.devcore_percent = static_cast<int32_t>(r.Int("devcore_percent", 0, 100, 100, false));
        d.type = r.Text("type", "");
        d.numa = r.Int("numa", -1, 4294967295LL, 0, false);
        std::string healthy = r.Text("healthy", "true", false);
        auto h = ParseGoBool(healthy);
        d.healthy = h.value_or(true);
        d.index = static_cast<int>(r.Int("index", 0, kInt32Max, 0));
        d.mode = r.Text("mode", std::string(kNodeDeviceMode), false);
        HCUDP_RETURN_IF_ERROR(r.status());
        if (!h)
          return InvalidArgumentError("record " + std::to_string(n) + ": healthy " +
                                      Quote(healthy) + " is not a bool");
        devices.push_back(d);
      }
      return EncodeNodeDevices(devices);
    }
    case Encoding::kPodDevices: {
      PodDevices pod;
      for (size_t n = 0; n < records.size(); ++n) {
        FieldReader r(records[n], n);
        int64_t c = r.Int("container", 0, 1023, 0);
        HCUDP_RETURN_IF_ERROR(r.status());
        if (pod.size() <= static_cast<size_t>(c)) pod.resize(c + 1);
        if (records[n].fields.size() == 1) continue;  // an empty container
        ContainerDevice d = ReadDevice(r);
        HCUDP_RETURN_IF_ERROR(r.status());
        pod[c].push_back(d);
      }
      return EncodePodDevices(pod);
    }
    case Encoding::kContainerDevices: {
      ContainerDevices devices;
      for (size_t n = 0; n < records.size(); ++n) {
        FieldReader r(records[n], n);
        ContainerDevice d = ReadDevice(r);
        HCUDP_RETURN_IF_ERROR(r.status());
        devices.push_back(d);
      }
      return EncodeContainerDevices(devices);
    }
    case Encoding::kContainerIndex: {
      std::vector<int> indexes;
      for (size_t n = 0; n < records.size(); ++n) {
        FieldReader r(records[n], n);
        indexes.push_back(static_cast<int>(r.Int("index", 0, kInt32Max, 0)));
        HCUDP_RETURN_IF_ERROR(r.status());
      }
      return EncodeContainerIndex(indexes);
    }
    default:
      break;
  }
  if (records.size() != 1) {
    return InvalidArgumentError(std::string(EncodingName(value.encoding)) +
                                " takes exactly one record, got " + std::to_string(records.size()));
  }
  FieldReader r(records[0], 0);
  switch (value.encoding) {
    case Encoding::kNodeLock: {
      std::string time = r.Text("time", "");
      std::string ns = r.Text("namespace", "");
      std::string pod = r.Text("pod", "");
      HCUDP_RETURN_IF_ERROR(r.status());
      HCUDP_ASSIGN_OR_RETURN(auto t, ParseRfc3339(time));
      HCUDP_ASSIGN_OR_RETURN(std::string check, FormatNodeLock(t, ns, pod));
      (void)check;  // validates namespace and name
      return time + "," + ns + "," + pod;
    }
    case Encoding::kHandshake: {
      std::string state = r.Text("state", "");
      std::string time = r.Text("time", "");
      HCUDP_RETURN_IF_ERROR(r.status());
      std::string out = state == "Reported" ? "Reported " + time : state + "_" + time;
      HCUDP_ASSIGN_OR_RETURN(Handshake h, ParseHandshake(out));
      if (HandshakeStateName(h.state) != state) {
        return InvalidArgumentError("handshake state " + Quote(state) +
                                    " is not Reported, Requesting or Deleted");
      }
      return out;
    }
    case Encoding::kMarkFileName: {
      MarkFileName m;
      m.pod_uid = r.Text("pod_uid", "");
      m.container = r.Text("container", "");
      m.card = static_cast<int>(r.Int("card", 0, kInt32Max, 0));
      m.vhcu_id = static_cast<int>(r.Int("vhcu_id", -1, kInt32Max, -1, false));
      HCUDP_RETURN_IF_ERROR(r.status());
      return FormatMarkFileName(m);
    }
    default:
      return InvalidArgumentError("unknown encoding");
  }
}

}  // namespace

const std::string* ReadableRecord::Find(std::string_view name) const {
  for (const ReadableField& f : fields) {
    if (f.name == name) return &f.value;
  }
  return nullptr;
}

std::string_view EncodingName(Encoding encoding) {
  for (const auto& e : kEncodingNames) {
    if (e.encoding == encoding) return e.name;
  }
  return "unknown";
}

StatusOr<Encoding> ParseEncoding(std::string_view name) {
  std::string names;
  for (const auto& e : kEncodingNames) {
    if (e.name == name) return e.encoding;
    names += (names.empty() ? "" : ", ") + std::string(e.name);
  }
  return InvalidArgumentError("encoding " + Quote(name) + " is not one of " + names);
}

StatusOr<ReadableValue> DecodeReadable(Encoding encoding, std::string_view value) {
  return Decode(encoding, value);
}

StatusOr<ReadableValue> DecodeAnyReadable(std::string_view value) {
  if (value.empty()) return InvalidArgumentError("empty value: nothing to decode");
  std::string why;
  // Container devices before pod devices: "A:" reads as both (a pod value
  // may lack its final ';'), and is one container's list as written.
  for (Encoding e :
       {Encoding::kHandshake, Encoding::kNodeLock, Encoding::kMarkFileName, Encoding::kNodeDevices,
        Encoding::kContainerDevices, Encoding::kPodDevices, Encoding::kContainerIndex}) {
    StatusOr<ReadableValue> v = Decode(e, value);
    if (v.ok()) return v;
    why += "; as " + std::string(EncodingName(e)) + ": " + v.status().message();
  }
  return InvalidArgumentError("value " + Quote(value) + " is no HAMi encoding" + why);
}

StatusOr<std::string> EncodeReadable(const ReadableValue& value) { return EncodeRecords(value); }

}  // namespace hcuctl::hami
