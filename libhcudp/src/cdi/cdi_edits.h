// Internal: the containerEdits object of a CDI spec, shared by the
// device-plugin spec (cdi_spec.cc) and the DRA specs (dra/dra_cdi_spec.cc).
#ifndef HCUDP_SRC_CDI_CDI_EDITS_H_
#define HCUDP_SRC_CDI_CDI_EDITS_H_

#include <rapidjson/prettywriter.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>

#include <string>
#include <string_view>

#include "hcudp/allocation.h"

namespace hcudp {

using CdiJsonWriter = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

// {"env", "deviceNodes": [{path, hostPath, permissions}], "mounts", "hooks"}; empty
// lists are left out.
void WriteCdiEdits(CdiJsonWriter& w, const ContainerAllocation& edits);

// The lowest cdiVersion the features of `spec` (a CDI spec object) need, by
// the CDI library's minimum-version rule (specs-go MinimumRequiredVersion):
// 0.4.0 a mount's type; 0.5.0 a device node's hostPath or a device name not
// starting with a letter; 0.6.0 annotations or a '.' in the kind's class;
// 0.7.0 intelRdt or additionalGids; 1.1.0 netDevices or intelRdt's schemata
// or enableMonitoring; else 0.3.0.
std::string CdiMinimumVersion(const rapidjson::Value& spec);

// `body`, a spec object written without "cdiVersion", as the spec to write:
// "cdiVersion" first, set to CdiMinimumVersion, pretty-printed, ending in a
// newline. Empty when `body` is not a JSON object (a bug of the writer).
std::string WithMinimumCdiVersion(std::string_view body);

}  // namespace hcudp

#endif  // HCUDP_SRC_CDI_CDI_EDITS_H_
