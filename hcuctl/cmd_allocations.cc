// hcuctl allocations: which pod and container hold which HCU devices, from
// kubelet's pod-resources API (List), plus HAMi mark files under
// /etc/vdev/dynamic (under --host-root) when present.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>

#include "command.h"
#include "hcudp/backend.h"
#include "hcudp/hami/mark_file.h"
#include "hcudp/options.h"
#include "hcudp/vhcu_manager.h"
#include "hcudp_cli/flags.h"
#include "plugin_client.h"
#include "podresources_v1.grpc.pb.h"

namespace hcuctl {
namespace {

constexpr int kAllocationsTimeoutMs = 5000;
constexpr std::string_view kResourcePrefix = "hygon.com/";

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
      grpc::CreateChannel(UnixTarget(socket), grpc::InsecureChannelCredentials()));
  grpc::ClientContext gctx;
  gctx.set_deadline(std::chrono::system_clock::now() +
                    std::chrono::milliseconds(kAllocationsTimeoutMs));
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
  std::vector<std::string> unparsable;
  auto mark_files = hcudp::ListMarkFiles(EffectiveHostRoot(ctx.options()), &unparsable);
  if (!mark_files.ok()) return Fail(ctx, self.name, mark_files.status());
  for (const hcudp::MarkFile& m : *mark_files) {
    std::string file = std::filesystem::path(m.path).filename().string();
    std::string vhcu = m.name.whole_card() ? "whole card" : "vdev" + std::to_string(m.name.vhcu_id);
    marks.Push(Value::MakeObject()
                   .Set("file", file)
                   .Set("podUid", m.name.pod_uid)
                   .Set("container", m.name.container)
                   .Set("card", m.name.card)
                   .Set("vhcu", vhcu));
    mark_table.AddRow({m.name.pod_uid, m.name.container, std::to_string(m.name.card), vhcu, file});
  }
  for (const std::string& name : unparsable) {
    r.notes.push_back("unparsable mark file: " + name);
  }
  r.value = Value::MakeObject()
                .Set("allocations", std::move(list))
                .Set("hamiMarkFiles", std::move(marks));
  r.tables.emplace_back("", std::move(table));
  if (!mark_table.empty()) {
    r.tables.emplace_back("HAMi mark files (" + std::string(hcudp::hami::kMarkFileDir) + "):",
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
