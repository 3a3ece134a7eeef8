// --cdi-spec-dir in every mode (DESIGN §4.4): a host path, so the daemon
// writes the specs at host-root + the path; a value that already lies under
// host-root is taken as given.
#ifndef HCUDP_CLI_CDI_DIR_H_
#define HCUDP_CLI_CDI_DIR_H_

#include <string>

#include "hcudp/status.h"

namespace hcudp {

// The host path the flag names: `cdi_spec_dir` itself, or the rest of it
// when it starts with `host_root` ("/tmp/r/var/run/cdi" under "/tmp/r" is
// "/var/run/cdi"). InvalidArgument naming the flag when it is not absolute.
StatusOr<std::string> CdiSpecHostPath(const std::string& host_root,
                                      const std::string& cdi_spec_dir);

// Where this process writes: host_root + CdiSpecHostPath(...).
StatusOr<std::string> CdiSpecWriteDir(const std::string& host_root,
                                      const std::string& cdi_spec_dir);

}  // namespace hcudp

#endif  // HCUDP_CLI_CDI_DIR_H_
