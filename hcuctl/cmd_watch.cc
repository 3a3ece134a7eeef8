// hcuctl watch: the node as the daemon sees it, change by change, until
// Ctrl-C (SIGINT) or SIGTERM. It runs the daemon's own node runtime, the
// library's NodeWatcher (hcudp/node_watcher.h): card health after the same
// hysteresis (two readings in a row), with the reason the health source
// gave; cards, vHCUs and MIG instances that appear or go; cards and vHCU
// state that cannot be read (unknown, not gone), and readable again. One line per change, with its
// UTC time (-o json: one JSON object per line). It never writes a CDI spec.
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <variant>

#include "command.h"
#include "hcudp/node_state.h"
#include "hcudp/node_watcher.h"

namespace hcuctl {
namespace {

std::string UtcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string CardText(const hcudp::Card& c) {
  return "card " + std::to_string(c.index) + " " + c.bdf;
}

// Prints whole lines from any thread (the watcher's, the caller's), each
// flushed at once: a pipe to `grep` or a log collector sees it as it comes.
class Printer {
 public:
  explicit Printer(Context& ctx) : ctx_(ctx) {}

  void Event(std::string event, Value fields, const std::string& text) {
    const std::string time = UtcNow();
    std::lock_guard<std::mutex> lock(mu_);
    if (ctx_.format() == OutputFormat::kJson) {
      Value line = Value::MakeObject();
      line.Set("time", time).Set("event", std::move(event));
      if (auto* members = std::get_if<Value::Object>(&fields.raw())) {
        for (const auto& [key, value] : *members) line.Set(key, value);
      }
      PrintJsonLine(line, ctx_.out());
    } else {
      ctx_.out() << time << "  " << text << "\n";
    }
    ctx_.out().flush();
  }

 private:
  Context& ctx_;
  std::mutex mu_;
};

template <typename T, typename KeyOf>
std::map<std::string, const T*> ByKey(const std::vector<T>& items, KeyOf key) {
  std::map<std::string, const T*> out;
  for (const T& item : items) out.emplace(key(item), &item);
  return out;
}

void DiffCards(const hcudp::NodeInventory& before, const hcudp::NodeInventory& after, Printer& p) {
  auto bdf = [](const hcudp::Card& c) { return c.bdf; };
  auto was = ByKey(before.cards, bdf);
  auto now = ByKey(after.cards, bdf);
  for (const auto& [key, c] : was) {
    if (now.count(key) != 0) continue;
    p.Event("card-gone", Value::MakeObject().Set("card", c->index).Set("bdf", c->bdf),
            CardText(*c) + " is gone");
  }
  for (const auto& [key, c] : now) {
    if (was.count(key) != 0) continue;
    p.Event("card-added",
            Value::MakeObject()
                .Set("card", c->index)
                .Set("bdf", c->bdf)
                .Set("health", hcudp::HealthName(c->health)),
            CardText(*c) + " appeared (" + c->model + ", " +
                std::string(hcudp::HealthName(c->health)) + ")");
  }
}

void DiffVhcus(const hcudp::NodeInventory& before, const hcudp::NodeInventory& after, Printer& p) {
  auto id = [](const hcudp::Vhcu& v) { return std::to_string(v.id); };
  auto was = ByKey(before.vhcus, id);
  auto now = ByKey(after.vhcus, id);
  auto fields = [](const hcudp::Vhcu& v) {
    return Value::MakeObject()
        .Set("vhcu", v.id)
        .Set("card", v.card)
        .Set("computeUnits", v.compute_units)
        .Set("memoryMiB", v.memory_mib);
  };
  auto text = [](const hcudp::Vhcu& v) {
    return "vHCU " + std::to_string(v.id) + " on card " + std::to_string(v.card) + " (" +
           std::to_string(v.compute_units) + " CU, " + std::to_string(v.memory_mib) + " MiB)";
  };
  for (const auto& [key, v] : was) {
    if (now.count(key) == 0) p.Event("vhcu-gone", fields(*v), text(*v) + " is gone");
  }
  for (const auto& [key, v] : now) {
    if (was.count(key) == 0) p.Event("vhcu-added", fields(*v), text(*v) + " appeared");
  }
}

void DiffMig(const hcudp::NodeInventory& before, const hcudp::NodeInventory& after, Printer& p) {
  auto id = [](const hcudp::MigInstance& m) { return m.device_id(); };
  auto was = ByKey(before.mig_instances, id);
  auto now = ByKey(after.mig_instances, id);
  for (const auto& [key, m] : was) {
    if (now.count(key) != 0) continue;
    p.Event("mig-gone", Value::MakeObject().Set("deviceId", key).Set("card", m->card),
            "MIG instance " + key + " on card " + std::to_string(m->card) + " is gone");
  }
  for (const auto& [key, m] : now) {
    if (was.count(key) != 0) continue;
    p.Event(
        "mig-added",
        Value::MakeObject().Set("deviceId", key).Set("card", m->card).Set("profile", m->profile),
        "MIG instance " + key + " (" + m->profile + ") on card " + std::to_string(m->card) +
            " appeared");
  }
}

void DiffGaps(const hcudp::NodeInventory& before, const hcudp::NodeInventory& after, Printer& p) {
  auto path = [](const hcudp::VhcuStateGap& g) { return g.path; };
  auto was = ByKey(before.vhcu_gaps, path);
  auto now = ByKey(after.vhcu_gaps, path);
  for (const auto& [key, g] : now) {
    if (was.count(key) != 0) continue;
    p.Event("vhcu-state-unreadable", Value::MakeObject().Set("path", key).Set("reason", g->reason),
            "cannot read vHCU state " + key + ": " + g->reason +
                " (the last good vHCUs are kept; no card it may concern is offered whole)");
  }
  for (const auto& [key, g] : was) {
    if (now.count(key) == 0) {
      p.Event("vhcu-state-readable", Value::MakeObject().Set("path", key),
              "vHCU state readable again: " + key);
    }
  }
}

void DiffUnknown(const hcudp::NodeInventory& before, const hcudp::NodeInventory& after,
                 Printer& p) {
  auto key = [](const hcudp::UnknownCard& u) {
    return std::to_string(u.last_known.index) + " " + u.last_known.bdf;
  };
  auto was = ByKey(before.unknown_cards, key);
  auto now = ByKey(after.unknown_cards, key);
  for (const auto& [k, u] : now) {
    if (was.count(k) != 0) continue;
    const std::string why = std::string(hcudp::UnknownReasonName(u->reason));
    p.Event("card-unknown",
            Value::MakeObject()
                .Set("card", u->last_known.index)
                .Set("bdf", u->last_known.bdf)
                .Set("reason", why)
                .Set("detail", u->detail),
            "card " + k + " is unknown: " + why + (u->detail.empty() ? "" : ": " + u->detail) +
                " (kept as it was: nothing on it is destroyed or offered)");
  }
  for (const auto& [k, u] : was) {
    if (now.count(k) != 0) continue;
    p.Event("card-known",
            Value::MakeObject().Set("card", u->last_known.index).Set("bdf", u->last_known.bdf),
            "card " + k + " is readable again");
  }
}

void PrintStart(const hcudp::NodeInventory& inv, Printer& p) {
  int healthy = 0;
  for (const hcudp::Card& c : inv.cards) healthy += c.health == hcudp::Health::kHealthy;
  p.Event("watching",
          Value::MakeObject()
              .Set("cards", static_cast<int>(inv.cards.size()))
              .Set("healthy", healthy)
              .Set("vhcus", static_cast<int>(inv.vhcus.size()))
              .Set("mig", static_cast<int>(inv.mig_instances.size())),
          "watching " + std::to_string(inv.cards.size()) + " cards (" + std::to_string(healthy) +
              " healthy), " + std::to_string(inv.vhcus.size()) + " vHCUs, " +
              std::to_string(inv.mig_instances.size()) + " MIG instances; Ctrl-C stops");
  DiffGaps(hcudp::NodeInventory{}, inv, p);
  DiffUnknown(hcudp::NodeInventory{}, inv, p);
}

int RunWatch(Context& ctx, const std::vector<std::string>& args) {
  hcudp::Options options = ctx.options();
  options.pulse_seconds = 10;
  hcudp::FlagSet flags("hcuctl watch", std::string(kWatchCommand.summary));
  flags.Add(hcudp::Flag::Int("pulse", "",
                             "seconds between periodic looks (0: only on node-file changes and "
                             "card events, which are seen at once either way)",
                             &options.pulse_seconds, 0, 86400));
  int code = kExitOk;
  auto rest = ParseCommandArgs(ctx, kWatchCommand, flags, args, &code);
  if (!rest) return code;
  if (!rest->empty()) {
    return UsageError(ctx, kWatchCommand, "unexpected argument \"" + rest->front() + "\"");
  }
  if (ctx.format() == OutputFormat::kYaml) {
    return UsageError(ctx, kWatchCommand, "-o yaml: watch prints lines; use -o table or -o json");
  }
  // hcuctl only looks: no CDI spec is written, whatever the environment says.
  options.device_list_strategy = hcudp::DeviceListStrategy::kDevices;
  // SIGINT and SIGTERM end the watch through sigwait below: blocked before
  // any thread (the backend's, the watcher's) starts, so all inherit it.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  auto backend = ctx.backend();
  if (!backend.ok()) return Fail(ctx, kWatchCommand.name, backend.status());
  Printer printer(ctx);
  hcudp::NodeState state;
  hcudp::NodeWatcher watcher(options, *backend, &state);
  watcher.set_health_listener(
      [&printer](const hcudp::Card& card, hcudp::Health health, const std::string& reason) {
        printer.Event("health",
                      Value::MakeObject()
                          .Set("card", card.index)
                          .Set("bdf", card.bdf)
                          .Set("health", hcudp::HealthName(health))
                          .Set("reason", reason),
                      CardText(card) + " is now " + std::string(hcudp::HealthName(health)) +
                          (reason.empty() ? "" : ": " + reason));
      });
  // Called on the caller's thread for Start's first look, then on the
  // watcher's: never two at once, so `last` needs no lock.
  std::optional<hcudp::NodeInventory> last;
  watcher.set_inventory_listener([&printer, &last](const hcudp::NodeInventory& inv) {
    if (!last) {
      PrintStart(inv, printer);
    } else {
      DiffCards(*last, inv, printer);
      DiffVhcus(*last, inv, printer);
      DiffMig(*last, inv, printer);
      DiffGaps(*last, inv, printer);
      DiffUnknown(*last, inv, printer);
    }
    last = inv;
  });
  if (hcudp::Status st = watcher.Start(); !st.ok()) return Fail(ctx, kWatchCommand.name, st);
  int signal = 0;
  while (sigwait(&stop, &signal) != 0) {
  }
  if (!watcher.Stop()) {
    // A look is stuck in a vendor call: what it uses must not be destroyed.
    ctx.out().flush();
    std::_Exit(kExitOk);
  }
  return kExitOk;
}

}  // namespace

const Command kWatchCommand = {
    "watch",
    "follow the node until Ctrl-C: card health (after the daemon's hysteresis), cards, vHCUs, "
    "MIG instances, unreadable vHCU state",
    "hcuctl [global flags] watch [--pulse S] [-o table|json]", RunWatch};

}  // namespace hcuctl
