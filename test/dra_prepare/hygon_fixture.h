// What Hygon's k8s-hcu-dra-driver v1.0 leaves on a node for the claims it
// prepared (reference/dra.md §6.1), written as that driver writes it: a vHCU
// of the claim's size on its card (through the node's backend, as DCGM), the
// HAMi-style mark, one CDI spec per vHCU plus the every-card spec, and the
// prepared-state file in the CDI directory. For the migration tests.
#ifndef HCUDP_TEST_DRA_PREPARE_HYGON_FIXTURE_H_
#define HCUDP_TEST_DRA_PREPARE_HYGON_FIXTURE_H_

#include <string>
#include <vector>

#include "hcudp/backend.h"

namespace hcudp::testing {

class HygonDriverNode {
 public:
  // `host_root`: the node's files; `cdi_dir`: a host path (Hygon's CDI_ROOT).
  explicit HygonDriverNode(std::string host_root, std::string cdi_dir = "/var/run/cdi");

  // One prepared device as Hygon's driver records it.
  struct Device {
    std::string claim_uid;
    std::string request;
    std::string device;  // the slice's card name
    bool whole_card = false;
    int card = 0;
    int vhcu_id = -1;
    std::string cdi_id;  // dra.hygon.com/vhcu=vdev<N> or dra.hygon.com/hcu=HCU-<serial>
    std::string mark;    // <pod>_<container>_<card>_<vdev|-1>
  };

  // Prepares an allocated claim (JSON with status.allocation) as Hygon's
  // driver does: each result whose request asks for cores or memory (in the
  // claim spec, not consumedCapacity) gets a vHCU of that size made through
  // `backend`; the others are whole cards. Then writes the files.
  std::vector<Device> Prepare(Backend& backend, const std::string& claim_json);

  std::string StatePath() const;  // full path
  std::string CdiPath(const std::string& file) const;
  std::string VhcuSpecFile(int vhcu_id) const;  // file name
  static constexpr const char* kCardSpecFile = "hcu-dra-driver-device.yaml";

 private:
  void Write(const NodeInventory& inventory);

  std::string root_;
  std::string cdi_dir_;
  std::vector<Device> devices_;
};

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_DRA_PREPARE_HYGON_FIXTURE_H_
