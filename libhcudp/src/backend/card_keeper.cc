#include "backend/card_keeper.h"

#include <algorithm>
#include <cctype>

#include "backend/node_files.h"
#include "hcudp/backend.h"
#include "hcudp_internal/log.h"

namespace hcudp {
namespace {

// "0000:09:00.0": domain, bus, device, function.
bool LooksLikeBdf(const std::string& name) {
  if (name.size() != 12 || name[4] != ':' || name[7] != ':' || name[10] != '.') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11}) {
    if (!std::isxdigit(static_cast<unsigned char>(name[i]))) return false;
  }
  return true;
}

bool IsHcuModule(const std::string& name) {
  // hycu, older hydcu (hcu-hardware.md §2.2).
  return name.size() >= 4 && name.compare(0, 2, "hy") == 0 &&
         name.compare(name.size() - 2, 2, "cu") == 0;
}

std::string Describe(const Card& card) {
  return "card " + std::to_string(card.index) + " (" + card.bdf + ")";
}

}  // namespace

std::set<std::string> DriverBoundBdfs(const internal::HostFs& fs) {
  std::set<std::string> bdfs;
  const std::string modules = fs.SysModuleDir();
  auto names = node_files::ListDir(modules);
  if (!names.ok()) return bdfs;
  for (const std::string& module : *names) {
    if (!IsHcuModule(module)) continue;
    const std::string drivers = node_files::JoinPath({modules, module, "drivers"});
    auto drivers_list = node_files::ListDir(drivers);
    if (!drivers_list.ok()) continue;
    for (const std::string& driver : *drivers_list) {
      if (driver.compare(0, 4, "pci:") != 0) continue;
      auto entries = node_files::ListDir(node_files::JoinPath({drivers, driver}));
      if (!entries.ok()) continue;
      for (const std::string& e : *entries) {
        if (LooksLikeBdf(e)) bdfs.insert(e);
      }
    }
  }
  return bdfs;
}

bool CardKeeper::PciPresent(const std::string& bdf) const {
  return node_files::Exists(fs_.PciDevice(bdf));
}

bool CardKeeper::Missed(const std::string& bdf, LookKind kind, int* missed) {
  const Clock::TimePoint now = clock_.Now();
  auto first = first_missed_.emplace(bdf, now).first->second;
  int& count = missed_[bdf];
  if (kind == LookKind::kLook || count == 0) ++count;
  *missed = count;
  return count >= kLooksToConfirm && now - first >= kTimeToConfirm;
}

std::vector<UnknownCard> CardKeeper::Merge(const CardLook& look, LookKind kind) {
  std::set<std::string> accounted;
  for (const Card& c : look.cards) accounted.insert(c.bdf);
  std::vector<UnknownCard> unknown;
  MutexLock lock(mutex_);
  for (const Card& c : look.cards) {
    seen_[c.bdf] = c;
    missed_.erase(c.bdf);
    first_missed_.erase(c.bdf);
    gone_.erase(c.bdf);
  }
  // Counted by the vendor but unreadable: kept, whatever the count of looks.
  for (UnknownCard u : look.failed) {
    if (u.last_known.bdf.empty()) {
      // Its BDF was not read either: the card earlier looks saw at this
      // index, if it is not readable now.
      for (const auto& [bdf, card] : seen_) {
        if (card.index == u.last_known.index && accounted.count(bdf) == 0) {
          u.last_known = card;
          break;
        }
      }
    } else if (auto it = seen_.find(u.last_known.bdf); it != seen_.end()) {
      const int index = u.last_known.index;
      u.last_known = it->second;
      u.last_known.index = index;
    }
    if (!u.last_known.bdf.empty()) {
      accounted.insert(u.last_known.bdf);
      int& count = missed_[u.last_known.bdf];
      if (kind == LookKind::kLook || count == 0) ++count;
      u.missed = count;
    }
    unknown.push_back(std::move(u));
  }
  // Seen before, not found now.
  for (auto it = seen_.begin(); it != seen_.end();) {
    const std::string bdf = it->first;
    if (accounted.count(bdf) != 0) {
      ++it;
      continue;
    }
    const std::string pci = fs_.PciDevice(bdf);
    if (!PciPresent(bdf) && look.driver_bound.count(bdf) == 0) {
      LOG(WARNING) << Describe(it->second) << " is gone: " << pci
                   << " no longer exists and no HCU driver binds it";
      missed_.erase(bdf);
      first_missed_.erase(bdf);
      it = seen_.erase(it);
      continue;
    }
    int missed = 0;
    if (Missed(bdf, kind, &missed)) {
      LOG(WARNING) << Describe(it->second) << " is taken as gone: " << missed
                   << " looks in a row over at least " << kTimeToConfirm.count()
                   << " s did not find it (" << pci << " is still there)";
      missed_.erase(bdf);
      first_missed_.erase(bdf);
      gone_.insert(bdf);
      it = seen_.erase(it);
      continue;
    }
    UnknownCard u;
    u.last_known = it->second;
    u.reason = UnknownReason::kMissedDiscovery;
    u.path = pci;
    u.detail = "not found by the last " + std::to_string(missed) +
               " look(s); its PCI device is still there";
    u.missed = missed;
    accounted.insert(bdf);
    unknown.push_back(std::move(u));
    ++it;
  }
  // Never seen by the vendor library, yet bound to the HCU driver (a card
  // the very first discovery missed, or a failed card whose BDF did not read).
  std::vector<std::string> bound;
  for (const std::string& bdf : look.driver_bound) {
    if (accounted.count(bdf) == 0 && gone_.count(bdf) == 0) bound.push_back(bdf);
  }
  std::vector<UnknownCard*> unnamed;
  for (UnknownCard& u : unknown) {
    if (u.last_known.bdf.empty()) unnamed.push_back(&u);
  }
  if (bound.size() == 1 && unnamed.size() == 1) {
    // One failed card without a BDF, one bound BDF unaccounted for: the same.
    unnamed.front()->last_known.bdf = bound.front();
    unnamed.front()->path = fs_.PciDevice(bound.front());
    bound.clear();
  }
  for (const std::string& bdf : bound) {
    int missed = 0;
    if (Missed(bdf, kind, &missed)) {
      LOG(WARNING) << "the HCU driver binds " << bdf << " but " << missed
                   << " looks in a row over at least " << kTimeToConfirm.count()
                   << " s did not list it; taken as no card";
      missed_.erase(bdf);
      first_missed_.erase(bdf);
      gone_.insert(bdf);
      continue;
    }
    UnknownCard u;
    u.last_known.index = -1;
    u.last_known.bdf = bdf;
    u.reason = UnknownReason::kMissedDiscovery;
    u.path = fs_.PciDevice(bdf);
    u.detail = "bound to the HCU driver but not listed by the vendor library";
    u.missed = missed;
    unknown.push_back(std::move(u));
  }
  std::sort(unknown.begin(), unknown.end(), [](const UnknownCard& a, const UnknownCard& b) {
    return a.last_known.bdf < b.last_known.bdf;
  });
  return unknown;
}

}  // namespace hcudp
