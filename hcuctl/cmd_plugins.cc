// hcuctl plugins [--check]: dial each hygon.com_* socket in the device-plugin
// directory the way kubelet does and report what it serves. --check is the
// DaemonSet liveness probe: exit 0 only if at least one plugin socket exists
// and every one answers.
#include <string>

#include "command.h"
#include "hcudp/flags.h"
#include "plugin_client.h"

namespace hcuctl {
namespace {

constexpr int kTimeoutMs = 2000;

int RunPlugins(Context& ctx, const std::vector<std::string>& args) {
  const Command& self = kPluginsCommand;
  bool check = false;
  hcudp::FlagSet flags("hcuctl plugins", std::string(self.summary));
  flags.Add(hcudp::Flag::Bool("check", "",
                              "liveness probe: print nothing, exit 0 only if every plugin answers",
                              &check));
  int code = kExitOk;
  auto rest = ParseCommandArgs(ctx, self, flags, args, &code);
  if (!rest) return code;
  if (!rest->empty()) return UsageError(ctx, self, "unexpected argument \"" + rest->front() + "\"");

  auto sockets = FindPluginSockets(ctx.options().device_plugin_path);
  if (!sockets.ok()) return Fail(ctx, self.name, sockets.status());

  Report r;
  Table table({"RESOURCE", "STATUS", "HEALTHY", "UNHEALTHY", "PREFERRED", "SOCKET"});
  Value list = Value::MakeArray();
  int failed = 0;
  for (const PluginSocket& s : *sockets) {
    PluginClient client(s.path);
    Value entry = Value::MakeObject();
    entry.Set("resource", s.resource).Set("socket", s.path);
    auto options = client.Options(kTimeoutMs);
    if (!options.ok()) {
      ++failed;
      entry.Set("status", "not answering").Set("error", options.status().message());
      table.AddRow({s.resource, "not answering", "-", "-", "-", s.path});
      list.Push(std::move(entry));
      continue;
    }
    int healthy = 0;
    int unhealthy = 0;
    std::string status = "serving";
    if (!check) {
      auto devices = client.Devices(kTimeoutMs);
      if (devices.ok()) {
        for (const auto& d : *devices) (d.health() == "Healthy" ? healthy : unhealthy)++;
      } else {
        status = "no device list";
        entry.Set("error", devices.status().message());
      }
    }
    bool preferred = options->get_preferred_allocation_available();
    entry.Set("status", status)
        .Set("healthy", healthy)
        .Set("unhealthy", unhealthy)
        .Set("getPreferredAllocationAvailable", preferred)
        .Set("preStartRequired", options->pre_start_required());
    table.AddRow({s.resource, status, std::to_string(healthy), std::to_string(unhealthy),
                  preferred ? "yes" : "no", s.path});
    list.Push(std::move(entry));
  }
  if (check) {
    if (sockets->empty()) {
      ctx.err() << "hcuctl plugins --check: no hygon.com_* plugin socket in "
                << ctx.options().device_plugin_path << "\n";
      return kExitFailed;
    }
    if (failed > 0) {
      ctx.err() << "hcuctl plugins --check: " << failed << " of " << sockets->size()
                << " plugin sockets do not answer\n";
      return kExitFailed;
    }
    return kExitOk;
  }
  r.value = Value::MakeObject()
                .Set("directory", ctx.options().device_plugin_path)
                .Set("plugins", std::move(list));
  r.tables.emplace_back("", std::move(table));
  if (sockets->empty()) {
    r.notes.push_back("(no hygon.com_* plugin sockets in " + ctx.options().device_plugin_path +
                      ")");
  }
  ctx.Print(r);
  return failed == 0 ? kExitOk : kExitFailed;
}

}  // namespace

const Command kPluginsCommand = {
    "plugins", "dial each hygon.com_* plugin socket: resource, health counts, options",
    "hcuctl [global flags] plugins [--check]", RunPlugins};

}  // namespace hcuctl
