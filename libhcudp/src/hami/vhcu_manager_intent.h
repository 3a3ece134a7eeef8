// VhcuManager::Intent, shared by vhcu_manager.cc and vhcu_recovery.cc
// (internal to the vHCU manager).
#ifndef HCUDP_SRC_HAMI_VHCU_MANAGER_INTENT_H_
#define HCUDP_SRC_HAMI_VHCU_MANAGER_INTENT_H_

#include <string>

#include "hami/intent_record.h"
#include "hcudp/vhcu_manager.h"

namespace hcudp {

struct VhcuManager::Intent {
  internal::IntentRecord record;
  std::string path;
};

}  // namespace hcudp

#endif  // HCUDP_SRC_HAMI_VHCU_MANAGER_INTENT_H_
