// hcuctl allocate --resource R (--count N | --ids a,b): ask the running
// plugin exactly as kubelet would (GetPreferredAllocation, then Allocate) and
// show what a container would get. Allocate has side effects only for HAMi
// resources (hcunum creates a vHCU), so those need --force.
#include <algorithm>
#include <sstream>
#include <string>

#include "command.h"
#include "hcudp_cli/flags.h"
#include "plugin_client.h"

namespace hcuctl {
namespace {

constexpr int kAllocateTimeoutMs = 5000;

std::vector<std::string> SplitIds(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

Report AllocationReport(const std::string& resource, const std::vector<std::string>& ids,
                        bool used_preferred, const v1beta1::ContainerAllocateResponse& resp) {
  Report r;
  Value devices = Value::MakeArray();
  Table dev_table({"HOST PATH", "CONTAINER PATH", "PERMISSIONS"});
  for (const auto& d : resp.devices()) {
    devices.Push(Value::MakeObject()
                     .Set("hostPath", d.host_path())
                     .Set("containerPath", d.container_path())
                     .Set("permissions", d.permissions()));
    dev_table.AddRow({d.host_path(), d.container_path(), d.permissions()});
  }
  Value mounts = Value::MakeArray();
  Table mount_table({"HOST PATH", "CONTAINER PATH", "READ-ONLY"});
  for (const auto& m : resp.mounts()) {
    mounts.Push(Value::MakeObject()
                    .Set("hostPath", m.host_path())
                    .Set("containerPath", m.container_path())
                    .Set("readOnly", m.read_only()));
    mount_table.AddRow({m.host_path(), m.container_path(), m.read_only() ? "yes" : "no"});
  }
  std::vector<std::pair<std::string, std::string>> env(resp.envs().begin(), resp.envs().end());
  std::sort(env.begin(), env.end());
  Value envs = Value::MakeObject();
  Table env_table({"NAME", "VALUE"});
  for (const auto& [k, v] : env) {
    envs.Set(k, v);
    env_table.AddRow({k, v});
  }
  Value cdi = Value::MakeArray();
  Table cdi_table({"CDI DEVICE"});
  for (const auto& c : resp.cdi_devices()) {
    cdi.Push(c.name());
    cdi_table.AddRow({c.name()});
  }
  Value id_list = Value::MakeArray();
  std::string id_text;
  for (const std::string& id : ids) {
    id_list.Push(id);
    id_text += (id_text.empty() ? "" : ",") + id;
  }
  r.value = Value::MakeObject()
                .Set("resource", resource)
                .Set("deviceIds", std::move(id_list))
                .Set("fromPreferredAllocation", used_preferred)
                .Set("devices", std::move(devices))
                .Set("mounts", std::move(mounts))
                .Set("envs", std::move(envs))
                .Set("cdiDevices", std::move(cdi));
  Table head({"RESOURCE", "DEVICE IDS", "CHOSEN BY"});
  head.AddRow({resource, id_text, used_preferred ? "plugin (GetPreferredAllocation)" : "request"});
  r.tables.emplace_back("", std::move(head));
  if (!dev_table.empty()) r.tables.emplace_back("devices:", std::move(dev_table));
  if (!mount_table.empty()) r.tables.emplace_back("mounts:", std::move(mount_table));
  if (!env_table.empty()) r.tables.emplace_back("env:", std::move(env_table));
  if (!cdi_table.empty()) r.tables.emplace_back("CDI devices:", std::move(cdi_table));
  return r;
}

int RunAllocate(Context& ctx, const std::vector<std::string>& args) {
  const Command& self = kAllocateCommand;
  std::string resource;
  int count = 0;
  std::string ids_text;
  bool force = false;
  hcudp::FlagSet flags("hcuctl allocate", std::string(self.summary));
  flags.Add(hcudp::Flag::String("resource", "", "resource name (hygon.com/hcu or hcu)", &resource));
  flags.Add(hcudp::Flag::Int("count", "", "let the plugin pick this many devices", &count, 1));
  flags.Add(hcudp::Flag::String("ids", "", "comma-separated device IDs to allocate", &ids_text));
  flags.Add(
      hcudp::Flag::Bool("force", "", "allow resources whose Allocate has side effects", &force));
  int code = kExitOk;
  auto rest = ParseCommandArgs(ctx, self, flags, args, &code);
  if (!rest) return code;
  if (!rest->empty()) return UsageError(ctx, self, "unexpected argument \"" + rest->front() + "\"");
  if (resource.empty()) return UsageError(ctx, self, "--resource is required");
  std::vector<std::string> ids = SplitIds(ids_text);
  // kubelet asks for a set of distinct devices; a repeated ID asks for one
  // device twice, which no container can get.
  for (size_t i = 0; i < ids.size(); ++i) {
    if (std::find(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(i), ids[i]) !=
        ids.begin() + static_cast<std::ptrdiff_t>(i)) {
      return UsageError(ctx, self,
                        "--ids: " + ids[i] +
                            " is given twice; a container gets each device once (kubelet sends "
                            "distinct IDs)");
    }
  }
  if ((count > 0) == !ids.empty()) {
    return UsageError(ctx, self, "give exactly one of --count N or --ids a,b");
  }
  if (resource.find("hcunum") != std::string::npos && !force) {
    return UsageError(ctx, self,
                      resource +
                          ": Allocate creates a vHCU and patches the pod in HAMi mode; "
                          "add --force if you really mean it");
  }

  auto socket = FindPluginSocket(ctx.options().device_plugin_path, resource);
  if (!socket.ok()) return Fail(ctx, self.name, socket.status());
  PluginClient client(socket->path);
  auto options = client.Options(kAllocateTimeoutMs);
  if (!options.ok()) return Fail(ctx, self.name, options.status());

  bool used_preferred = false;
  if (count > 0) {
    auto devices = client.Devices(kAllocateTimeoutMs);
    if (!devices.ok()) return Fail(ctx, self.name, devices.status());
    std::vector<std::string> healthy;
    for (const auto& d : *devices) {
      if (d.health() == "Healthy") healthy.push_back(d.id());
    }
    if (static_cast<int>(healthy.size()) < count) {
      return Fail(ctx, self.name,
                  hcudp::ResourceExhaustedError(
                      socket->resource + " has " + std::to_string(healthy.size()) +
                      " healthy devices, " + std::to_string(count) + " requested"));
    }
    if (options->get_preferred_allocation_available()) {
      v1beta1::PreferredAllocationRequest req;
      auto* c = req.add_container_requests();
      for (const std::string& id : healthy) c->add_available_deviceids(id);
      c->set_allocation_size(count);
      auto pref = client.Preferred(req, kAllocateTimeoutMs);
      if (!pref.ok()) return Fail(ctx, self.name, pref.status());
      if (pref->container_responses_size() > 0 &&
          pref->container_responses(0).deviceids_size() == count) {
        ids.assign(pref->container_responses(0).deviceids().begin(),
                   pref->container_responses(0).deviceids().end());
        used_preferred = true;
      }
    }
    if (ids.empty()) ids.assign(healthy.begin(), healthy.begin() + count);
  }

  v1beta1::AllocateRequest req;
  auto* c = req.add_container_requests();
  for (const std::string& id : ids) c->add_devices_ids(id);
  auto resp = client.Allocate(req, kAllocateTimeoutMs);
  if (!resp.ok()) return Fail(ctx, self.name, resp.status());
  if (resp->container_responses_size() != 1) {
    return Fail(
        ctx, self.name,
        hcudp::InternalError("plugin returned " + std::to_string(resp->container_responses_size()) +
                             " container responses for 1 request"));
  }
  ctx.Print(AllocationReport(socket->resource, ids, used_preferred, resp->container_responses(0)));
  return kExitOk;
}

}  // namespace

const Command kAllocateCommand = {
    "allocate", "ask the running plugin what a container would get (preferred + Allocate)",
    "hcuctl [global flags] allocate --resource R (--count N | --ids a,b) [--force]", RunAllocate};

}  // namespace hcuctl
