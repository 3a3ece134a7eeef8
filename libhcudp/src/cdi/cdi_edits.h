// Internal: the containerEdits object of a CDI spec, shared by the
// device-plugin spec (cdi_spec.cc) and the DRA specs (dra/dra_cdi_spec.cc).
#ifndef HCUDP_SRC_CDI_CDI_EDITS_H_
#define HCUDP_SRC_CDI_CDI_EDITS_H_

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include "hcudp/allocation.h"

namespace hcudp {

using CdiJsonWriter = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

// {"env", "deviceNodes": [{path, hostPath, permissions}], "mounts", "hooks"}; empty
// lists are left out.
void WriteCdiEdits(CdiJsonWriter& w, const ContainerAllocation& edits);

}  // namespace hcudp

#endif  // HCUDP_SRC_CDI_CDI_EDITS_H_
