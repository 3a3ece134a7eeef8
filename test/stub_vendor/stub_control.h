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
//   hysmi               "fail" (exit 1), "hang" (sleep 60 s), "empty"
//   hysmi_word          "<card>:<word>" status word hy-smi prints for a card
//   hysmi_form          "DCU" to print the older DCU[..] lines
//   hysmi_version       what `hy-smi --version` reports (default 1.6.2)
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
