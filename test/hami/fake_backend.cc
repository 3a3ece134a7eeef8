#include "hami/fake_backend.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "hcudp/vdev_conf.h"

namespace hcudp::testing {
namespace {

// vdev<id>.conf as the driver writes it when it makes the vHCU: device_id
// is the card's index then.
void WriteFakeVdevConf(const std::string& host_root, const Vhcu& v) {
  VdevConf conf;
  conf.pci_bus_id = v.card_bdf;
  const int cus = std::clamp(v.compute_units, 0, 128);
  conf.cu_mask_lo = cus >= 64 ? ~uint64_t{0} : (uint64_t{1} << cus) - 1;
  conf.cu_mask_hi = cus <= 64 ? 0 : cus >= 128 ? ~uint64_t{0} : (uint64_t{1} << (cus - 64)) - 1;
  conf.cu_count = cus;
  conf.mem_mib = v.memory_mib;
  conf.device_id = std::max(v.card, 0);
  conf.vdev_id = v.id;
  conf.pipe_id = v.id % 20;
  std::filesystem::create_directories(host_root + "/etc/vdev");
  std::ofstream(host_root + v.conf_path, std::ios::trunc) << FormatVdevConf(conf);
}

}  // namespace

FakeBackend::FakeBackend(std::string host_root) : host_root_(std::move(host_root)) {
  for (int i = 0; i < 2; ++i) {
    Card c;
    c.index = i;
    c.bdf = i == 0 ? "0000:09:00.0" : "0000:0a:00.0";
    c.model = "K100_AI";
    c.serial = i == 0 ? "SN01" : "SN02";
    c.compute_units = 120;
    c.memory_bytes = 65520 * kMiB;
    inventory_.cards.push_back(c);
  }
  all_cards_ = inventory_.cards;
}

void FakeBackend::RenumberLocked(std::vector<Card> cards) {
  for (size_t i = 0; i < cards.size(); ++i) cards[i].index = static_cast<int>(i);
  inventory_.cards = std::move(cards);
  for (Vhcu& v : inventory_.vhcus) {
    const Card* card = inventory_.FindCardByBdf(v.card_bdf);
    v.card = card != nullptr ? card->index : -1;
  }
}

void FakeBackend::MissCard(const std::string& bdf) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Card> cards;
  for (const Card& c : all_cards_) {
    if (c.bdf != bdf) cards.push_back(c);
  }
  RenumberLocked(std::move(cards));
}

void FakeBackend::RestoreCards() {
  std::lock_guard<std::mutex> lock(mu_);
  RenumberLocked(all_cards_);
}

StatusOr<NodeInventory> FakeBackend::Discover() {
  std::lock_guard<std::mutex> lock(mu_);
  NodeInventory inv = inventory_;
  for (int id : unreadable) {
    inv.vhcus.erase(std::remove_if(inv.vhcus.begin(), inv.vhcus.end(),
                                   [id](const Vhcu& v) { return v.id == id; }),
                    inv.vhcus.end());
    VhcuStateGap gap;
    gap.vhcu_id = id;
    gap.path = host_root_ + "/etc/vdev/vdev" + std::to_string(id) + ".conf";
    gap.reason = "fake: unreadable";
    inv.vhcu_gaps.push_back(gap);
  }
  return inv;
}

StatusOr<std::vector<CardHealthReport>> FakeBackend::QueryHealth() {
  return std::vector<CardHealthReport>{};
}

int FakeBackend::AddLocked(int card, int compute_units, uint64_t memory_mib) {
  int id = 0;
  while (inventory_.LookupVhcu(id).certainty() == Certainty::kFound)
    ++id;  // the lowest free index, as the driver
  Vhcu v;
  v.id = id;
  v.card = card;
  const Card* parent = inventory_.FindCard(card);
  v.card_bdf = parent != nullptr ? parent->bdf : "";
  v.compute_units = compute_units;
  v.memory_mib = memory_mib;
  v.conf_path = "/etc/vdev/vdev" + std::to_string(id) + ".conf";
  WriteFakeVdevConf(host_root_, v);
  inventory_.vhcus.push_back(v);
  std::sort(inventory_.vhcus.begin(), inventory_.vhcus.end(),
            [](const Vhcu& a, const Vhcu& b) { return a.id < b.id; });
  return id;
}

int FakeBackend::AddVhcu(int card, int compute_units, uint64_t memory_mib) {
  std::lock_guard<std::mutex> lock(mu_);
  return AddLocked(card, compute_units, memory_mib);
}

StatusOr<Vhcu> FakeBackend::CreateVhcu(int card, int compute_units, uint64_t memory_mib) {
  if (on_create) on_create();
  std::lock_guard<std::mutex> lock(mu_);
  if (fail_create) return ResourceExhaustedError("no free vHCU slot on card");
  if (inventory_.FindCard(card) == nullptr) return NotFoundError("no card " + std::to_string(card));
  int id = AddLocked(card, compute_units, memory_mib);
  if (fail_create_after_it) return InternalError("created, but the new vdev file was not seen");
  return inventory_.LookupVhcu(id).value();
}

Status FakeBackend::DestroyVhcu(int id) {
  std::function<void(int)> hook;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++destroy_calls;
    if (inventory_.LookupVhcu(id).certainty() != Certainty::kFound)
      return NotFoundError("no vHCU " + std::to_string(id));
    if (busy_destroys > 0) {
      --busy_destroys;
      return UnavailableError("DEVICE_BUSY");
    }
    hook = on_destroy;
  }
  if (hook) hook(id);
  std::lock_guard<std::mutex> lock(mu_);
  auto& v = inventory_.vhcus;
  v.erase(std::remove_if(v.begin(), v.end(), [&](const Vhcu& x) { return x.id == id; }), v.end());
  std::remove((host_root_ + "/etc/vdev/vdev" + std::to_string(id) + ".conf").c_str());
  return OkStatus();
}

void FakeBackend::SetBdf(int id, const std::string& bdf) {
  std::lock_guard<std::mutex> lock(mu_);
  for (Vhcu& v : inventory_.vhcus) {
    if (v.id != id) continue;
    v.card_bdf = bdf;
    WriteFakeVdevConf(host_root_, v);
  }
}

std::vector<Vhcu> FakeBackend::vhcus() {
  std::lock_guard<std::mutex> lock(mu_);
  return inventory_.vhcus;
}

bool FakeBackend::HasVhcu(int id) {
  std::lock_guard<std::mutex> lock(mu_);
  return inventory_.LookupVhcu(id).certainty() == Certainty::kFound;
}

}  // namespace hcudp::testing
