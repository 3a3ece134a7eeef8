// The createContainer hook that CDI specs name for the /dev/dri/by-path
// links of a card (DESIGN §9, reference/hcu-hardware.md §2.3): udev makes
// /dev/dri/by-path/pci-<bdf>-card and -render on the host, and some HCU user
// space finds its card by them, but a container's /dev has only the nodes.
//
//   hcu-cdi-hook create-symlinks --link ../card1::/dev/dri/by-path/pci-0000:09:00.0-card ...
//   hcuctl cdi-hook create-symlinks ...        (the same, from the CLI)
//
// The runtime passes the OCI state on stdin ({"bundle": ...}); the hook reads
// <bundle>/config.json for the container's root and makes each link there.
// It runs as root on the host before pivot_root, inside a root file system
// the workload's image made: every step below the root is taken with
// O_NOFOLLOW, so a symbolic link in the image cannot point it elsewhere, and
// only names directly in /dev/dri/by-path pointing at "../<node>" are made.
//
// Only libc and RapidJSON (header-only): the same code links statically as
// hcu-cdi-hook, which the DaemonSet copies to the host (the runtime runs it
// there, where our shared libraries are not).
#ifndef HCUCTL_CDI_HOOK_H_
#define HCUCTL_CDI_HOOK_H_

#include <istream>
#include <ostream>
#include <string>
#include <vector>

namespace hcuctl {

// `args`: the words after the program (or `hcuctl cdi-hook`):
// "create-symlinks" and its --link TARGET::LINK pairs. Reads the OCI state
// from `state`. Returns 2 on bad usage (arguments, or a state on stdin that is
// not an OCI state: larger than 4 MiB, nested deeper than 64, no absolute
// bundle), saying why on `err`; else 0, with a warning on `err` when the
// links cannot be made (config.json unreadable, not a regular file, or bad;
// the root's /dev/dri a link): a missing convenience link must not keep a
// workload from starting.
int RunCdiHook(const std::vector<std::string>& args, std::istream& state, std::ostream& err);

}  // namespace hcuctl

#endif  // HCUCTL_CDI_HOOK_H_
