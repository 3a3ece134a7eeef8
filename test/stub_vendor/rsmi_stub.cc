// Stand-in librocm_smi64: the RSMI calls of reference/hcu-hardware.md §1.3,
// answered from the SimNode through the stub core. Built twice: normally,
// and with HCUDP_STUB_OMIT_ECC (no rsmi_dev_ecc_count_get) for the
// missing-symbol test.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "stub_control.h"
#include "stub_core.h"
#include "vendor/vendor_abi.h"

using hcudp::StatusOr;
using hcudp::stub::RsmiRefcount;
using hcudp::stub::Sim;
using hcudp::stub::SimIndexForRsmi;

namespace {

// The sim card behind an RSMI index, or an RSMI error.
rsmi_status_t CardOrBdf(uint32_t dv_ind, int* sim_index) {
  if (RsmiRefcount() <= 0 || Sim() == nullptr) return RSMI_STATUS_INIT_ERROR;
  *sim_index = SimIndexForRsmi(static_cast<int>(dv_ind));
  return *sim_index < 0 ? RSMI_STATUS_INVALID_ARGS : RSMI_STATUS_SUCCESS;
}

// The same for every query but the BDF's: knob query_fails makes the card
// counted (its BDF still answers, as the vendor library's index map needs)
// but every other query about it fail.
rsmi_status_t Card(uint32_t dv_ind, int* sim_index) {
  if (rsmi_status_t st = CardOrBdf(dv_ind, sim_index); st != RSMI_STATUS_SUCCESS) return st;
  if (hcudp::stub::KnobInt("query_fails", -1) == *sim_index) return RSMI_STATUS_FILE_ERROR;
  return RSMI_STATUS_SUCCESS;
}

uint64_t ParseBdfId(const std::string& bdf) {
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  std::sscanf(bdf.c_str(), "%x:%x:%x.%x", &domain, &bus, &dev, &fn);
  return (static_cast<uint64_t>(domain) << 32) | (bus << 8) | (dev << 3) | fn;
}

}  // namespace

HCUDP_STUB_API rsmi_status_t rsmi_init(uint64_t /*init_flags*/) {
  if (hcudp::stub::ConsumeFault("rsmi_init_failures")) return RSMI_STATUS_INIT_ERROR;
  const long ok_inits = hcudp::stub::KnobInt("rsmi_init_fails_after", -1);
  if (ok_inits >= 0 && hcudp::stub::RsmiInitsSinceReset() >= ok_inits) {
    return RSMI_STATUS_INIT_ERROR;
  }
  if (Sim() == nullptr) return RSMI_STATUS_INIT_ERROR;
  ++hcudp::stub::RsmiInitsSinceReset();
  ++RsmiRefcount();
  ++hcudp::stub::RsmiInitCalls();
  return RSMI_STATUS_SUCCESS;
}

HCUDP_STUB_API rsmi_status_t rsmi_shut_down(void) {
  if (RsmiRefcount() <= 0) {
    ++hcudp::stub::RsmiUnbalancedShutdowns();
    return RSMI_STATUS_INIT_ERROR;
  }
  --RsmiRefcount();
  return RSMI_STATUS_SUCCESS;
}

HCUDP_STUB_API rsmi_status_t rsmi_status_string(rsmi_status_t status, const char** text) {
  if (text == nullptr) return RSMI_STATUS_INVALID_ARGS;
  switch (status) {
    case RSMI_STATUS_SUCCESS:
      *text = "RSMI_STATUS_SUCCESS: The function has been executed successfully.";
      break;
    case RSMI_STATUS_INIT_ERROR:
      *text =
          "RSMI_STATUS_INIT_ERROR: An error occurred when initializing internal data structures.";
      break;
    case RSMI_STATUS_INVALID_ARGS:
      *text =
          "RSMI_STATUS_INVALID_ARGS: The provided arguments do not meet the preconditions required "
          "for input.";
      break;
    default:
      *text = "An unknown error occurred";
      break;
  }
  return RSMI_STATUS_SUCCESS;
}

HCUDP_STUB_API rsmi_status_t rsmi_num_monitor_devices(uint32_t* num_devices) {
  if (RsmiRefcount() <= 0 || Sim() == nullptr) return RSMI_STATUS_INIT_ERROR;
  if (num_devices == nullptr) return RSMI_STATUS_INVALID_ARGS;
  *num_devices = static_cast<uint32_t>(hcudp::stub::VisibleCards().size());
  return RSMI_STATUS_SUCCESS;
}

HCUDP_STUB_API rsmi_status_t rsmi_dev_pci_id_get(uint32_t dv_ind, uint64_t* bdfid) {
  int card = 0;
  if (rsmi_status_t st = CardOrBdf(dv_ind, &card); st != RSMI_STATUS_SUCCESS) return st;
  StatusOr<std::string> bdf = Sim()->PciBdf(card);
  if (!bdf.ok()) return RSMI_STATUS_NOT_FOUND;
  *bdfid = ParseBdfId(*bdf);
  return RSMI_STATUS_SUCCESS;
}

HCUDP_STUB_API rsmi_status_t rsmi_dev_serial_number_get(uint32_t dv_ind, char* serial,
                                                        uint32_t len) {
  int card = 0;
  if (rsmi_status_t st = Card(dv_ind, &card); st != RSMI_STATUS_SUCCESS) return st;
  StatusOr<std::string> s = Sim()->Serial(card);
  if (!s.ok()) return RSMI_STATUS_NOT_SUPPORTED;
  if (serial == nullptr || len <= s->size()) return RSMI_STATUS_INSUFFICIENT_SIZE;
  std::memcpy(serial, s->c_str(), s->size() + 1);
  return RSMI_STATUS_SUCCESS;
}

HCUDP_STUB_API rsmi_status_t rsmi_dev_unique_id_get(uint32_t dv_ind, uint64_t* id) {
  int card = 0;
  if (rsmi_status_t st = Card(dv_ind, &card); st != RSMI_STATUS_SUCCESS) return st;
  StatusOr<uint64_t> v = Sim()->UniqueId(card);
  if (!v.ok()) return RSMI_STATUS_NOT_SUPPORTED;
  *id = *v;
  return RSMI_STATUS_SUCCESS;
}

HCUDP_STUB_API rsmi_status_t rsmi_dev_id_get(uint32_t dv_ind, uint16_t* id) {
  int card = 0;
  if (rsmi_status_t st = Card(dv_ind, &card); st != RSMI_STATUS_SUCCESS) return st;
  StatusOr<uint16_t> v = Sim()->PciDeviceId(card);
  if (!v.ok()) return RSMI_STATUS_NOT_SUPPORTED;
  *id = *v;
  return RSMI_STATUS_SUCCESS;
}

HCUDP_STUB_API rsmi_status_t rsmi_dev_memory_total_get(uint32_t dv_ind, rsmi_memory_type_t type,
                                                       uint64_t* total) {
  int card = 0;
  if (rsmi_status_t st = Card(dv_ind, &card); st != RSMI_STATUS_SUCCESS) return st;
  if (type != RSMI_MEM_TYPE_VRAM) return RSMI_STATUS_NOT_SUPPORTED;
  StatusOr<uint64_t> v = Sim()->MemoryTotalBytes(card);
  if (!v.ok()) return RSMI_STATUS_NOT_SUPPORTED;
  *total = *v;
  return RSMI_STATUS_SUCCESS;
}

HCUDP_STUB_API rsmi_status_t rsmi_topo_get_numa_node_number(uint32_t dv_ind, uint32_t* numa) {
  int card = 0;
  if (rsmi_status_t st = Card(dv_ind, &card); st != RSMI_STATUS_SUCCESS) return st;
  StatusOr<int> v = Sim()->NumaNode(card);
  if (!v.ok()) return RSMI_STATUS_NOT_SUPPORTED;
  *numa = *v < 0 ? 0xFFFFFFFFu : static_cast<uint32_t>(*v);  // the driver's "none"
  return RSMI_STATUS_SUCCESS;
}

namespace {

rsmi_status_t Link(uint32_t src, uint32_t dst, hcudp::RsmiLink* link) {
  int a = 0, b = 0;
  if (rsmi_status_t st = Card(src, &a); st != RSMI_STATUS_SUCCESS) return st;
  if (rsmi_status_t st = Card(dst, &b); st != RSMI_STATUS_SUCCESS) return st;
  StatusOr<hcudp::RsmiLink> l = Sim()->LinkBetween(a, b);
  if (!l.ok()) return RSMI_STATUS_INVALID_ARGS;
  *link = *l;
  return RSMI_STATUS_SUCCESS;
}

}  // namespace

HCUDP_STUB_API rsmi_status_t rsmi_topo_get_link_type(uint32_t src, uint32_t dst, uint64_t* hops,
                                                     RSMI_IO_LINK_TYPE* type) {
  hcudp::RsmiLink link;
  if (rsmi_status_t st = Link(src, dst, &link); st != RSMI_STATUS_SUCCESS) return st;
  *hops = static_cast<uint64_t>(link.hops);
  *type = link.type == hcudp::LinkType::kPcie ? RSMI_IOLINK_TYPE_PCIEXPRESS
          : (link.type == hcudp::LinkType::kHsl || link.type == hcudp::LinkType::kHyswitch)
              ? RSMI_IOLINK_TYPE_XGMI
              : RSMI_IOLINK_TYPE_UNDEFINED;
  return RSMI_STATUS_SUCCESS;
}

HCUDP_STUB_API rsmi_status_t rsmi_topo_get_link_weight(uint32_t src, uint32_t dst,
                                                       uint64_t* weight) {
  hcudp::RsmiLink link;
  if (rsmi_status_t st = Link(src, dst, &link); st != RSMI_STATUS_SUCCESS) return st;
  *weight = static_cast<uint64_t>(link.weight);
  return RSMI_STATUS_SUCCESS;
}

HCUDP_STUB_API rsmi_status_t rsmi_topo_is_hylink(uint32_t src, uint32_t dst, bool* is_hylink) {
  hcudp::RsmiLink link;
  if (rsmi_status_t st = Link(src, dst, &link); st != RSMI_STATUS_SUCCESS) return st;
  *is_hylink = link.type == hcudp::LinkType::kHyswitch;
  return RSMI_STATUS_SUCCESS;
}

namespace {

// The XHCL links of a card: one up link per HSL peer (not via a HySwitch),
// in card order, at most 7 as on the hardware.
// One look at the visible cards for all peers: the daemon asks for every
// link of every pair, so a per-peer look (two control-file reads each) made
// a node's discovery O(cards^4) reads, seconds under ASan on a busy machine.
std::vector<int> XhclPeers(uint32_t dv_ind) {
  std::vector<int> peers;
  const std::vector<int> cards = hcudp::stub::VisibleCards();  // RSMI index -> SimNode index
  hcudp::VendorLib* sim = hcudp::stub::Sim();
  if (sim == nullptr || dv_ind >= cards.size()) return peers;
  for (uint32_t peer = 0; peer < cards.size() && peers.size() < 7; ++peer) {
    if (peer == dv_ind) continue;
    StatusOr<hcudp::RsmiLink> link = sim->LinkBetween(cards[dv_ind], cards[peer]);
    if (link.ok() && link->type == hcudp::LinkType::kHsl) peers.push_back(static_cast<int>(peer));
  }
  return peers;
}

}  // namespace

HCUDP_STUB_API rsmi_status_t rsmi_dev_xhcl_link_number_get(uint32_t dv_ind, uint32_t* link_num) {
  int card = 0;
  if (rsmi_status_t st = Card(dv_ind, &card); st != RSMI_STATUS_SUCCESS) return st;
  *link_num = static_cast<uint32_t>(XhclPeers(dv_ind).size());
  return RSMI_STATUS_SUCCESS;
}

HCUDP_STUB_API rsmi_status_t rsmi_dev_xhcl_link_state_get(uint32_t dv_ind, uint32_t link_id,
                                                          uint32_t* link_state) {
  int card = 0;
  if (rsmi_status_t st = Card(dv_ind, &card); st != RSMI_STATUS_SUCCESS) return st;
  if (link_id >= XhclPeers(dv_ind).size()) return RSMI_STATUS_INVALID_ARGS;
  *link_state = 1;
  return RSMI_STATUS_SUCCESS;
}

HCUDP_STUB_API rsmi_status_t rsmi_dev_xhcl_link_remote_bdfid_get(uint32_t dv_ind, uint32_t link_id,
                                                                 uint64_t* bdfid) {
  int card = 0;
  if (rsmi_status_t st = Card(dv_ind, &card); st != RSMI_STATUS_SUCCESS) return st;
  const std::vector<int> peers = XhclPeers(dv_ind);
  if (link_id >= peers.size()) return RSMI_STATUS_INVALID_ARGS;
  return rsmi_dev_pci_id_get(static_cast<uint32_t>(peers[link_id]), bdfid);
}

#ifndef HCUDP_STUB_OMIT_ECC
HCUDP_STUB_API rsmi_status_t rsmi_dev_ecc_count_get(uint32_t dv_ind, rsmi_gpu_block_t block,
                                                    rsmi_error_count_t* ec) {
  int card = 0;
  if (rsmi_status_t st = Card(dv_ind, &card); st != RSMI_STATUS_SUCCESS) return st;
  if (ec == nullptr) return RSMI_STATUS_INVALID_ARGS;
  *ec = rsmi_error_count_t{};
  if (block == RSMI_GPU_BLOCK_UMC) {
    if (std::optional<std::string> n = hcudp::stub::CardKnob("ecc_uncorrectable", card)) {
      ec->uncorrectable_err = std::strtoull(n->c_str(), nullptr, 10);
    }
    return RSMI_STATUS_SUCCESS;
  }
  // Only UMC reports counts on the stand-in; other blocks are unsupported.
  return RSMI_STATUS_NOT_SUPPORTED;
}
#endif

HCUDP_STUB_API rsmi_status_t rsmi_version_str_get(uint32_t component, char* text, uint32_t len) {
  if (RsmiRefcount() <= 0 || Sim() == nullptr) return RSMI_STATUS_INIT_ERROR;
  if (component != 0) return RSMI_STATUS_NOT_SUPPORTED;
  StatusOr<std::string> v = Sim()->DriverVersion();
  if (!v.ok()) return RSMI_STATUS_NOT_SUPPORTED;
  if (text == nullptr || len <= v->size()) return RSMI_STATUS_INSUFFICIENT_SIZE;
  std::memcpy(text, v->c_str(), v->size() + 1);
  return RSMI_STATUS_SUCCESS;
}

// --- Event notification (rsmi_event_notification_*) ---
// A test raises an event with the knob rsmi_event=<seq>:<card>:<type>[:<text>]
// (card: SimNode index; type: rsmi_evt_notification_type_t); each new <seq>
// is delivered once, to a waiting rsmi_event_notification_get, if that card
// was opened with the type in its mask. As the driver, which queues an event
// only on the event files open at the time, an event raised before its card
// was opened (pending when the mask is set, or seen while the card is not
// open) is lost. rsmi_events=unsupported makes init answer NOT_SUPPORTED, as
// a runtime without KFD SMI events; rsmi_event_init_gate=<path> holds the
// first card's init (after creating <path>.entered) while <path> exists, up
// to 10 s: the window in which a caller has looked at the cards but not yet
// subscribed.
namespace {

struct EventState {
  std::mutex mu;
  std::map<uint32_t, uint64_t> masks;  // opened RSMI index -> mask
  std::string last_seq;
};

EventState& Events() {
  static EventState* state = new EventState();  // never destroyed: safe at exit
  return *state;
}

// The knob's event: seq, SimNode index of its card, type, text.
struct KnobEvent {
  std::string seq;
  int sim_card = -1;
  uint32_t type = 0;
  std::string text = "stub event";
};

// The knob's event, complete, or nullopt (none, or a half-written file).
std::optional<KnobEvent> ReadKnobEvent() {
  std::optional<std::string> v = hcudp::stub::Knob("rsmi_event");
  if (!v || v->empty()) return std::nullopt;
  std::vector<std::string> parts;
  size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    size_t colon = v->find(':', start);
    if (colon == std::string::npos) break;
    parts.push_back(v->substr(start, colon - start));
    start = colon + 1;
  }
  parts.push_back(v->substr(start));
  if (parts.size() < 3 || parts[2].empty()) return std::nullopt;
  KnobEvent e;
  e.seq = parts[0];
  e.sim_card = std::atoi(parts[1].c_str());
  e.type = static_cast<uint32_t>(std::atoi(parts[2].c_str()));
  if (parts.size() > 3) e.text = parts[3];
  return e;
}

// The RSMI index of SimNode card `sim_card`, or -1.
int RsmiIndexOf(int sim_card) {
  std::vector<int> visible = hcudp::stub::VisibleCards();
  auto it = std::find(visible.begin(), visible.end(), sim_card);
  return it == visible.end() ? -1 : static_cast<int>(it - visible.begin());
}

// The pending event of the knob, if it is new and wanted; marks it delivered
// (or lost, when its card is not open).
bool TakeEvent(rsmi_evt_notification_data_t* out) {
  std::optional<KnobEvent> e = ReadKnobEvent();
  if (!e) return false;
  EventState& s = Events();
  std::lock_guard<std::mutex> lock(s.mu);
  if (e->seq == s.last_seq) return false;
  const int rsmi = RsmiIndexOf(e->sim_card);
  auto it = s.masks.find(static_cast<uint32_t>(rsmi));
  if (rsmi < 0 || it == s.masks.end()) {
    s.last_seq = e->seq;  // no event file open on that card: lost
    return false;
  }
  if (e->type == 0 || e->type > 64 || (it->second & (uint64_t{1} << (e->type - 1))) == 0) {
    return false;
  }
  s.last_seq = e->seq;
  std::memset(out, 0, sizeof(*out));
  out->dv_ind = static_cast<uint32_t>(rsmi);
  out->event = e->type;
  std::snprintf(out->message, sizeof(out->message), "%s", e->text.c_str());
  return true;
}

// rsmi_event_init_gate: see above.
void WaitAtInitGate(uint32_t dv_ind) {
  std::optional<std::string> gate = hcudp::stub::Knob("rsmi_event_init_gate");
  if (dv_ind != 0 || !gate || gate->empty()) return;
  if (FILE* f = std::fopen((*gate + ".entered").c_str(), "w")) std::fclose(f);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (access(gate->c_str(), F_OK) == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

HCUDP_STUB_API rsmi_status_t rsmi_event_notification_init(uint32_t dv_ind) {
  int sim = -1;
  if (rsmi_status_t st = Card(dv_ind, &sim); st != RSMI_STATUS_SUCCESS) return st;
  if (hcudp::stub::Knob("rsmi_events").value_or("") == "unsupported") {
    return RSMI_STATUS_NOT_SUPPORTED;
  }
  WaitAtInitGate(dv_ind);
  EventState& s = Events();
  std::lock_guard<std::mutex> lock(s.mu);
  s.masks[dv_ind] = 0;
  return RSMI_STATUS_SUCCESS;
}

HCUDP_STUB_API rsmi_status_t rsmi_event_notification_mask_set(uint32_t dv_ind, uint64_t mask) {
  EventState& s = Events();
  std::optional<KnobEvent> pending = ReadKnobEvent();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.masks.find(dv_ind);
  if (it == s.masks.end()) return RSMI_STATUS_INIT_ERROR;
  it->second = mask;
  // Raised on this card before it was opened: the driver never queued it.
  if (pending && pending->seq != s.last_seq &&
      RsmiIndexOf(pending->sim_card) == static_cast<int>(dv_ind)) {
    s.last_seq = pending->seq;
  }
  return RSMI_STATUS_SUCCESS;
}

HCUDP_STUB_API rsmi_status_t rsmi_event_notification_get(int timeout_ms, uint32_t* num_elem,
                                                         rsmi_evt_notification_data_t* data) {
  if (num_elem == nullptr || data == nullptr || *num_elem == 0) return RSMI_STATUS_INVALID_ARGS;
  if (RsmiRefcount() <= 0) return RSMI_STATUS_INIT_ERROR;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
  for (;;) {
    if (TakeEvent(&data[0])) {
      *num_elem = 1;
      return RSMI_STATUS_SUCCESS;
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  *num_elem = 0;
  return RSMI_STATUS_NO_DATA;
}

HCUDP_STUB_API rsmi_status_t rsmi_event_notification_stop(uint32_t dv_ind) {
  EventState& s = Events();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.masks.erase(dv_ind) ? RSMI_STATUS_SUCCESS : RSMI_STATUS_INIT_ERROR;
}
