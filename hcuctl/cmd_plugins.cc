// hcuctl plugins [--check]: dial each hygon.com_* socket in the device-plugin
// directory the way kubelet does and report what it serves.
//
// --check is the DaemonSet liveness probe (exec'ed in the daemon's
// container, so in its pid namespace). It judges only the sockets of the
// hcu-dp-daemon processes it can see: a socket's name carries the tag of
// the process that made it, derived from that process's pid and start time
// (hcudp/plugin_socket.h), so a process in /proc whose name is hcu-dp-daemon
// and whose tag matches owns the socket. Sockets of other instances (an old
// pod after a surge rollout, a crashed one) are not this container's
// business. Exit 0 when such a daemon has at least one socket and every one
// answers GetDevicePluginOptions; all sockets are dialled in parallel,
// within 1 s in all.
#include <dirent.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>

#include "command.h"
#include "hcudp/plugin_socket.h"
#include "hcudp_cli/flags.h"
#include "hcudp_internal/file_util.h"
#include "plugin_client.h"

namespace hcuctl {
namespace {

constexpr int kPluginsTimeoutMs = 2000;
constexpr int kCheckTimeoutMs = 800;  // all sockets together; the probe allows 1 s

// Tag -> pid of every hcu-dp-daemon process visible in /proc.
std::map<std::string, long> LiveDaemonTags() {
  std::map<std::string, long> tags;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return tags;
  while (dirent* e = readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || pid <= 0) continue;
    auto comm = hcudp::file_util::ReadFile("/proc/" + std::string(e->d_name) + "/comm", 64);
    if (!comm.ok() || *comm != "hcu-dp-daemon\n") continue;
    auto ticks = hcudp::ProcessStartTicks(pid);
    if (ticks.ok()) tags[hcudp::InstanceTag(pid, *ticks)] = pid;
  }
  closedir(proc);
  return tags;
}

// --check: see the top of the file.
int Check(Context& ctx, const std::vector<PluginSocket>& sockets) {
  const std::string& dir = ctx.options().device_plugin_path;
  const auto tags = LiveDaemonTags();
  if (tags.empty()) {
    ctx.err() << "hcuctl plugins --check: no hcu-dp-daemon process in this pid namespace\n";
    return kExitFailed;
  }
  std::vector<PluginSocket> own;
  for (const PluginSocket& s : sockets) {
    auto parts = hcudp::ParsePluginSocketName(s.path.substr(s.path.find_last_of('/') + 1));
    if (parts && tags.count(parts->tag)) own.push_back(s);
  }
  if (own.empty()) {
    ctx.err() << "hcuctl plugins --check: no socket of hcu-dp-daemon (pid " << tags.begin()->second
              << ", tag " << tags.begin()->first << ") in " << dir << "\n";
    return kExitFailed;
  }
  std::vector<std::string> errors(own.size());
  std::vector<std::thread> dials;
  for (size_t i = 0; i < own.size(); ++i) {
    dials.emplace_back([&own, &errors, i] {
      auto options = PluginClient(own[i].path).Options(kCheckTimeoutMs);
      if (!options.ok()) errors[i] = options.status().message();
    });
  }
  for (std::thread& t : dials) t.join();
  int failed = 0;
  for (size_t i = 0; i < own.size(); ++i) {
    if (errors[i].empty()) continue;
    ++failed;
    ctx.err() << "hcuctl plugins --check: " << own[i].path << ": " << errors[i] << "\n";
  }
  if (failed > 0) {
    ctx.err() << "hcuctl plugins --check: " << failed << " of " << own.size()
              << " sockets of this hcu-dp-daemon do not answer\n";
    return kExitFailed;
  }
  return kExitOk;
}

int RunPlugins(Context& ctx, const std::vector<std::string>& args) {
  const Command& self = kPluginsCommand;
  bool check = false;
  hcudp::FlagSet flags("hcuctl plugins", std::string(self.summary));
  flags.Add(hcudp::Flag::Bool("check", "",
                              "liveness probe: exit 0 only if every socket of the hcu-dp-daemon "
                              "in this pid namespace answers (within 1 s)",
                              &check));
  int code = kExitOk;
  auto rest = ParseCommandArgs(ctx, self, flags, args, &code);
  if (!rest) return code;
  if (!rest->empty()) return UsageError(ctx, self, "unexpected argument \"" + rest->front() + "\"");

  auto sockets = FindPluginSockets(ctx.options().device_plugin_path);
  if (!sockets.ok()) return Fail(ctx, self.name, sockets.status());
  if (check) return Check(ctx, *sockets);

  Report r;
  Table table({"RESOURCE", "STATUS", "HEALTHY", "UNHEALTHY", "PREFERRED", "SOCKET"});
  Value list = Value::MakeArray();
  int failed = 0;
  for (const PluginSocket& s : *sockets) {
    PluginClient client(s.path);
    Value entry = Value::MakeObject();
    entry.Set("resource", s.resource).Set("socket", s.path);
    auto options = client.Options(kPluginsTimeoutMs);
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
    auto devices = client.Devices(kPluginsTimeoutMs);
    if (devices.ok()) {
      for (const auto& d : *devices) (d.health() == "Healthy" ? healthy : unhealthy)++;
    } else {
      status = "no device list";
      entry.Set("error", devices.status().message());
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
