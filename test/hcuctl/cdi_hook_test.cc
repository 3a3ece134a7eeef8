// hcu-cdi-hook / hcuctl cdi-hook (hcuctl/cdi_hook.h): the createContainer
// hook of our CDI specs, given a bundle as a runtime lays it out, including a
// root file system whose image plays tricks.
#include "cdi_hook.h"

#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <sstream>

#include "testing/testutil.h"

namespace hcuctl {
namespace {

namespace fs = std::filesystem;
using hcudp::testing::PathExists;
using hcudp::testing::TempDir;
using hcudp::testing::WriteFile;

const std::string kHookCard = "../card1::/dev/dri/by-path/pci-0000:09:00.0-card";
const std::string kHookRender = "../renderD128::/dev/dri/by-path/pci-0000:09:00.0-render";

// A bundle: config.json with a relative root.path, rootfs/dev/dri with the
// card's nodes (made by the runtime before createContainer hooks run).
struct HookBundle {
  TempDir dir;
  HookBundle() {
    WriteFile(dir.Join("bundle/config.json"),
              R"({"ociVersion": "1.1.0", "root": {"path": "rootfs"}, "process": {}})");
    WriteFile(dir.Join("bundle/rootfs/dev/dri/card1"), "");
    WriteFile(dir.Join("bundle/rootfs/dev/dri/renderD128"), "");
  }
  std::string State() const {
    return R"({"ociVersion": "1.1.0", "id": "c1", "status": "creating", "pid": 42, "bundle": ")" +
           dir.Join("bundle") + "\"}";
  }
  std::string ByPath(const std::string& name) const {
    return dir.Join("bundle/rootfs/dev/dri/by-path/" + name);
  }
};

int RunHook(const std::vector<std::string>& args, const std::string& state, std::string* err) {
  std::istringstream in(state);
  std::ostringstream out;
  int code = RunCdiHook(args, in, out);
  *err = out.str();
  return code;
}

std::string HookLinkTarget(const std::string& path) {
  std::error_code ec;
  return fs::read_symlink(path, ec).string();
}

BOOST_AUTO_TEST_SUITE(cdi_hook)

BOOST_AUTO_TEST_CASE(makes_the_by_path_links_of_a_card_in_the_container_root) {
  HookBundle b;
  std::string err;
  BOOST_TEST(RunHook({"create-symlinks", "--link", kHookCard, "--link", kHookRender}, b.State(),
                     &err) == 0,
             err);
  BOOST_TEST(HookLinkTarget(b.ByPath("pci-0000:09:00.0-card")) == "../card1");
  BOOST_TEST(HookLinkTarget(b.ByPath("pci-0000:09:00.0-render")) == "../renderD128");
}

BOOST_AUTO_TEST_CASE(a_second_run_keeps_its_links_and_replaces_a_stale_one) {
  HookBundle b;
  std::string err;
  BOOST_REQUIRE(RunHook({"create-symlinks", "--link", kHookCard}, b.State(), &err) == 0);
  fs::remove(b.ByPath("pci-0000:09:00.0-card"));
  fs::create_symlink("../card7", b.ByPath("pci-0000:09:00.0-card"));
  BOOST_TEST(RunHook({"create-symlinks", "--link=" + kHookCard}, b.State(), &err) == 0, err);
  BOOST_TEST(HookLinkTarget(b.ByPath("pci-0000:09:00.0-card")) == "../card1");
}

// The image made /dev/dri a link to a host directory: the hook, root on
// the host, must not follow it and write there.
BOOST_AUTO_TEST_CASE(a_link_in_the_image_does_not_lead_the_hook_out_of_the_root) {
  HookBundle b;
  const std::string outside = b.dir.Join("host-etc");
  fs::create_directories(outside);
  fs::remove_all(b.dir.Join("bundle/rootfs/dev/dri"));
  fs::create_directory_symlink(outside, b.dir.Join("bundle/rootfs/dev/dri"));
  std::string err;
  BOOST_TEST(RunHook({"create-symlinks", "--link", kHookCard}, b.State(), &err) == 0);
  BOOST_TEST(err.find("warning") != std::string::npos, err);
  BOOST_TEST(err.find("/dev/dri is not a directory (or is a link)") != std::string::npos, err);
  BOOST_TEST(!PathExists(outside + "/by-path"));
}

BOOST_AUTO_TEST_CASE(links_outside_by_path_or_targets_outside_dri_are_refused) {
  HookBundle b;
  for (const std::string bad : {"../card1::/etc/passwd", "../card1::/dev/dri/by-path/../../x",
                                "/etc/shadow::/dev/dri/by-path/x", "../../etc::/dev/dri/by-path/x",
                                "../card1:/dev/dri/by-path/x"}) {
    std::string err;
    BOOST_TEST(RunHook({"create-symlinks", "--link", bad}, b.State(), &err) == 2, bad);
    BOOST_TEST(err.find("--link") != std::string::npos, err);
  }
  BOOST_TEST(!PathExists(b.dir.Join("bundle/rootfs/dev/dri/by-path")));
}

BOOST_AUTO_TEST_CASE(bad_state_or_usage_is_an_error_naming_it) {
  HookBundle b;
  std::string err;
  BOOST_TEST(RunHook({"create-symlinks", "--link", kHookCard}, "not json", &err) == 2);
  BOOST_TEST(err.find("OCI state on stdin is not a JSON object") != std::string::npos, err);
  BOOST_TEST(RunHook({"create-symlinks"}, R"({"bundle": "relative"})", &err) == 2);
  BOOST_TEST(err.find("no absolute \"bundle\"") != std::string::npos, err);
  BOOST_TEST(RunHook({"delete-symlinks"}, b.State(), &err) == 2);
  BOOST_TEST(err.find("unknown command \"delete-symlinks\"") != std::string::npos, err);
  BOOST_TEST(RunHook({"create-symlinks", "--frob"}, b.State(), &err) == 2);
}

// The program the specs name runs as the runtime runs it: argv, state on stdin.
BOOST_AUTO_TEST_CASE(the_hook_program_reads_the_state_from_stdin) {
  HookBundle b;
  WriteFile(b.dir.Join("state.json"), b.State());
  const std::string hook = hcudp::testing::BinaryPath("hcuctl/hcu-cdi-hook");
  auto r =
      hcudp::testing::Run({"/bin/sh", "-c", "exec \"$0\" create-symlinks --link \"$1\" < \"$2\"",
                           hook, kHookRender, b.dir.Join("state.json")});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(HookLinkTarget(b.ByPath("pci-0000:09:00.0-render")) == "../renderD128");
}

// The hook program as a runtime runs it, with the state in a file on stdin,
// under a 20 s deadline (timeout exits 124 when it hangs).
hcudp::testing::RunResult RunHookProgram(const std::string& state_file,
                                         const std::vector<std::string>& links) {
  std::vector<std::string> argv = {"/usr/bin/timeout",
                                   "20",
                                   "/bin/sh",
                                   "-c",
                                   "f=$1; shift; exec \"$0\" create-symlinks \"$@\" < \"$f\"",
                                   hcudp::testing::BinaryPath("hcuctl/hcu-cdi-hook"),
                                   state_file};
  for (const std::string& l : links) {
    argv.push_back("--link");
    argv.push_back(l);
  }
  return hcudp::testing::Run(argv);
}

// About a million '[' (2 MiB, under the 4 MiB cap) crashed the hook with
// SIGSEGV: RapidJSON's recursive parser ran off the stack.
BOOST_AUTO_TEST_CASE(deeply_nested_json_on_stdin_is_bad_usage_not_a_crash) {
  HookBundle b;
  WriteFile(b.dir.Join("state.json"), std::string(1 << 20, '[') + std::string(1 << 20, ']'));
  auto r = RunHookProgram(b.dir.Join("state.json"), {kHookCard});
  BOOST_TEST(r.exit_code == 2, r.err);
  BOOST_TEST(r.err.find("the OCI state on stdin nests deeper than 64 levels") != std::string::npos,
             r.err);
}

BOOST_AUTO_TEST_CASE(a_deeply_nested_config_json_is_a_warning_and_the_container_starts) {
  HookBundle b;
  WriteFile(b.dir.Join("bundle/config.json"),
            R"({"root": {"path": "rootfs"}, "x": )" + std::string(1 << 20, '[') +
                std::string(1 << 20, ']') + "}");
  WriteFile(b.dir.Join("state.json"), b.State());
  auto r = RunHookProgram(b.dir.Join("state.json"), {kHookCard});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.err.find("warning") != std::string::npos, r.err);
  BOOST_TEST(r.err.find("config.json nests deeper than 64 levels") != std::string::npos, r.err);
}

// A FIFO at config.json that no one writes: open(2) without O_NONBLOCK
// waits for a writer forever, and the container never starts.
BOOST_AUTO_TEST_CASE(a_fifo_at_config_json_is_refused_without_waiting) {
  HookBundle b;
  std::filesystem::remove(b.dir.Join("bundle/config.json"));
  BOOST_REQUIRE(::mkfifo(b.dir.Join("bundle/config.json").c_str(), 0600) == 0);
  WriteFile(b.dir.Join("state.json"), b.State());
  auto r = RunHookProgram(b.dir.Join("state.json"), {kHookCard});
  BOOST_TEST(r.exit_code == 0, "exit " << r.exit_code << " (124: it hung) " << r.err);
  BOOST_TEST(r.err.find("config.json is not a regular file") != std::string::npos, r.err);
}

// Hygon's and NVIDIA's hooks warn and go on: a convenience link must not
// fail the container. Here the container has no /dev/dri at all.
BOOST_AUTO_TEST_CASE(a_link_that_cannot_be_made_is_a_warning_and_exit_0) {
  HookBundle b;
  std::filesystem::remove_all(b.dir.Join("bundle/rootfs/dev"));
  WriteFile(b.dir.Join("state.json"), b.State());
  auto r = RunHookProgram(b.dir.Join("state.json"), {kHookCard});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.err.find("hcu-cdi-hook: warning: no /dev/dri/by-path links") != std::string::npos,
             r.err);
  std::filesystem::remove(b.dir.Join("bundle/config.json"));
  r = RunHookProgram(b.dir.Join("state.json"), {kHookCard});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.err.find("cannot read " + b.dir.Join("bundle/config.json")) != std::string::npos,
             r.err);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcuctl
