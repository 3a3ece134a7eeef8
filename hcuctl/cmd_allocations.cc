// hcuctl allocations: which pod and container hold which HCU devices, from
// kubelet's pod-resources API (List), plus HAMi mark files under
// /etc/vdev/dynamic when present.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>

#include "command.h"
#include "hcudp/backend.h"
#include "hcudp/flags.h"
#include "podresources_v1.grpc.pb.h"

namespace hcuctl {
namespace {

constexpr int kTimeoutMs = 5000;
constexpr std::string_view kResourcePrefix = "hygon.com/";
constexpr const char* kMarkDir = "/etc/vdev/dynamic";

struct MarkFile {
  std::string name;
  std::string pod_uid, container, card, vhcu;
};

// <podUID>_<container>_<dvInd>_<vdevIdx>; anything else is reported as is.
std::vector<MarkFile> ReadMarkFiles(const std::string& host_root) {
  std::vector<MarkFile> out;
  std::error_code ec;
  std::filesystem::directory_iterator it(hcudp::HostPath(host_root, kMarkDir), ec);
  if (ec) return out;
  for (const auto& entry : it) {
    MarkFile m;
    m.name = entry.path().filename().string();
    std::vector<std::string> parts;
    size_t start = 0;
    for (size_t pos; (pos = m.name.find('_', start)) != std::string::npos; start = pos + 1) {
      parts.push_back(m.name.substr(start, pos - start));
    }
    parts.push_back(m.name.substr(start));
    if (parts.size() == 4) {
      m.pod_uid = parts[0];
      m.container = parts[1];
      m.card = parts[2];
      m.vhcu = parts[3] == "-1" ? "whole card" : "vdev" + parts[3];
    }
    out.push_back(std::move(m));
  }
  std::sort(out.begin(), out.end(),
            [](const MarkFile& a, const MarkFile& b) { return a.name < b.name; });
  return out;
}

int RunAllocations(Context& ctx, const std::vector<std::string>& args) {
  const Command& self = kAllocationsCommand;
  bool all = false;
  hcudp::FlagSet flags("hcuctl allocations", std::string(self.summary));
  flags.Add(hcudp::Flag::Bool("all-resources", "", "also show non-hygon.com resources", &all));
  int code = kExitOk;
  auto rest = ParseCommandArgs(ctx, self, flags, args, &code);
  if (!rest) return code;
  if (!rest->empty()) return UsageError(ctx, self, "unexpected argument \"" + rest->front() + "\"");

  const std::string& socket = ctx.options().pod_resources_socket;
  auto stub = v1::PodResourcesLister::NewStub(
      grpc::CreateChannel("unix://" + socket, grpc::InsecureChannelCredentials()));
  grpc::ClientContext gctx;
  gctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(kTimeoutMs));
  v1::ListPodResourcesResponse resp;
  grpc::Status s = stub->List(&gctx, v1::ListPodResourcesRequest(), &resp);
  if (!s.ok()) {
    return Fail(ctx, self.name,
                hcudp::UnavailableError("pod-resources List on " + socket + ": " +
                                        s.error_message() + " (set --pod-resources-socket)"));
  }

  Report r;
  Table table({"NAMESPACE", "POD", "CONTAINER", "RESOURCE", "DEVICES"});
  Value list = Value::MakeArray();
  for (const auto& pod : resp.pod_resources()) {
    for (const auto& c : pod.containers()) {
      for (const auto& d : c.devices()) {
        if (!all && d.resource_name().rfind(kResourcePrefix, 0) != 0) continue;
        Value ids = Value::MakeArray();
        std::string id_text;
        for (const auto& id : d.device_ids()) {
          ids.Push(id);
          id_text += (id_text.empty() ? "" : ",") + id;
        }
        list.Push(Value::MakeObject()
                      .Set("namespace", pod.namespace_())
                      .Set("pod", pod.name())
                      .Set("container", c.name())
                      .Set("resource", d.resource_name())
                      .Set("deviceIds", std::move(ids)));
        table.AddRow({pod.namespace_(), pod.name(), c.name(), d.resource_name(), id_text});
      }
    }
  }
  Value marks = Value::MakeArray();
  Table mark_table({"POD UID", "CONTAINER", "CARD", "VHCU", "MARK FILE"});
  for (const MarkFile& m : ReadMarkFiles(ctx.options().host_root.empty() ? "/"
                                                                         : ctx.options().host_root)) {
    marks.Push(Value::MakeObject()
                   .Set("file", m.name)
                   .Set("podUid", m.pod_uid)
                   .Set("container", m.container)
                   .Set("card", m.card)
                   .Set("vhcu", m.vhcu));
    mark_table.AddRow({m.pod_uid.empty() ? "?" : m.pod_uid, m.container, m.card, m.vhcu, m.name});
  }
  r.value = Value::MakeObject().Set("allocations", std::move(list)).Set("hamiMarkFiles",
                                                                         std::move(marks));
  r.tables.emplace_back("", std::move(table));
  if (!mark_table.empty()) {
    r.tables.emplace_back("HAMi mark files (" + std::string(kMarkDir) + "):",
                          std::move(mark_table));
  }
  ctx.Print(r);
  return kExitOk;
}

}  // namespace

const Command kAllocationsCommand = {
    "allocations", "which pod/container holds which HCU devices (kubelet pod-resources)",
    "hcuctl [global flags] allocations [--all-resources]", RunAllocations};

}  // namespace hcuctl
