// Configuration and fault injection shared by the stand-in vendor libraries
// and the fake hy-smi. Every knob is read at each call, so a test can change
// it while a daemon runs:
//   1. the control file named by $HCUDP_STUB_CONTROL, lines "key=value"
//      ('#' comments allowed), then
//   2. the environment variable HCUDP_STUB_<KEY upper-cased>.
// Keys:
//   sim_node            SimNode YAML the libraries answer from (required)
//   host_root           where that node is rendered; default: the
//                       --host-root= argument of the loading process (for
//                       hy-smi: of the process that ran it)
//   rsmi_init_failures  rsmi_init fails (INIT_ERROR) this many times; -1 always
//   destroy_busy        dmiDestroySingleVDevice answers DEVICE_BUSY this many
//                       times before acting
//   vanish_card         this SimNode card index is gone from RSMI, DMI, hy-smi
//   ecc_uncorrectable   "<card>:<count>" uncorrectable UMC errors on a card
//   rsmi_init_fails_after  rsmi_init succeeds this many times (since the
//                       last reset), then fails with INIT_ERROR
//   hymgr               "down": at the first DMI call the library never
//                       initialises (every call then answers 13 for the life
//                       of the process); after a good first call: 32
//   dmi_fail_count      the next N DMI calls return dmi_fail_code (-1: all)
//   dmi_fail_code       the dmiStatus those calls return (default 1, ERROR)
//   reset_required      DMI calls about this SimNode card answer 35
//   query_fails         this SimNode card is counted and its BDF answers, but
//                       every other RSMI query and dmiGetDeviceInfo about it
//                       fail (FILE_ERROR / ERROR)
//   mig_mode_fails      1: nvmlGetSystemMigMode answers UNKNOWN (the MIG
//                       mode cannot be read)
//   create_on_card      dmiCreateVDevices acts on this SimNode card instead
//   stale_vdev          this vdev id is unknown to the driver (VDEV_NOT_EXIST)
//                       though its vdev<N>.conf stays in /etc/vdev (a destroy
//                       whose unlink never ran), until a dmiCreateVDevices
//                       gives the id out again and rewrites the conf; the
//                       stale conf still counts against the card's capacity
//   hysmi               "fail" (exit 1), "hang" (ignores SIGTERM, sleeps
//                       60 s), "empty", "odd" (odd lines among good ones)
//   hysmi_count         file the fake hy-smi appends a line to per run
//   hysmi_signals       file it writes its blocked-signal count and SIGTERM
//                       disposition to
//   hysmi_word          "<card>:<word>" status word hy-smi prints for a card
//   hysmi_form          "DCU" to print the older DCU[..] lines
//   hysmi_version       what `hy-smi --version` reports (default 1.6.2)
//   rsmi_event          "<seq>:<card>:<type>[:<text>]": one RSMI event per new
//                       <seq>, delivered to rsmi_event_notification_get
//   rsmi_events         "unsupported": rsmi_event_notification_init answers
//                       NOT_SUPPORTED
//   rsmi_event_init_gate  a path: the first card's event init creates
//                       <path>.entered and waits while <path> exists (10 s)
#ifndef HCUDP_TEST_STUB_VENDOR_STUB_CONTROL_H_
#define HCUDP_TEST_STUB_VENDOR_STUB_CONTROL_H_

#include <optional>
#include <string>
#include <utility>

namespace hcudp::stub {

// The value of `key`, or nullopt.
std::optional<std::string> Knob(const std::string& key);
// Integer knob; `fallback` when absent or not a number.
long KnobInt(const std::string& key, long fallback);
// "<card>:<value>" knob for `card`, or nullopt.
std::optional<std::string> CardKnob(const std::string& key, int card);

}  // namespace hcudp::stub

#endif  // HCUDP_TEST_STUB_VENDOR_STUB_CONTROL_H_
