#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <cstring>
#include <future>
#include <vector>

#include "hcudp/plugin_socket.h"
#include "hcudp_internal/socket_dir.h"
#include "plugin_manager.h"

namespace hcudp::daemon {
namespace {

struct SocketDir {
  std::string path;
  SocketDir() {
    char tmpl[] = "/tmp/hcudp-sock-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~SocketDir() { std::system(("rm -rf " + path).c_str()); }
};

// Binds a unix socket at `path`; listens when `listen` is true. Returns fd.
int BindAt(const std::string& path, bool listen) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  BOOST_REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  if (listen) BOOST_REQUIRE(::listen(fd, 1) == 0);
  return fd;
}

bool Exists(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0;
}

BOOST_AUTO_TEST_SUITE(socket_names)

BOOST_AUTO_TEST_CASE(name_starts_with_the_vendor_prefix_and_round_trips) {
  std::string name = PluginSocketName("hcu-share-15c-8g", "0k3v9qa");
  BOOST_TEST(name == "hygon.com_hcu-share-15c-8g@0k3v9qa");
  BOOST_TEST(ParsePluginSocketName(name)->last_name == "hcu-share-15c-8g");
  // An earlier version's name is still recognised (the start-up sweep).
  BOOST_TEST(ParsePluginSocketName("hygon.com_hcu@123-18c.sock")->last_name == "hcu");
}

BOOST_AUTO_TEST_CASE(other_files_are_not_ours) {
  for (const char* f :
       {"kubelet.sock", "hygon.com_hcu", "hygon.com_hcu.sock", "hygon.com_@1.sock",
        "nvidia.com_gpu@1.sock", "hygon.com_hcu@", "hygon.com_hcu@.sock", "hygon.com_hcu@a/b"}) {
    BOOST_TEST_CONTEXT(f) { BOOST_TEST(!ParsePluginSocketName(f).has_value()); }
  }
}

BOOST_AUTO_TEST_CASE(instance_is_the_tag_of_this_pid_and_start_time) {
  std::string id = InstanceId();
  BOOST_TEST(id == InstanceId());
  BOOST_TEST(id.size() == kInstanceTagLength);
  auto ticks = ProcessStartTicks(::getpid());
  BOOST_REQUIRE(ticks.ok());
  BOOST_TEST(id == InstanceTag(::getpid(), *ticks));
  BOOST_TEST(InstanceTag(1, *ticks) != InstanceTag(1, *ticks + 1));  // pid 1 in two pods
}

// The longest policy-2 name of the demo nodes fits microk8s's 57-byte
// directory with the tag.
BOOST_AUTO_TEST_CASE(a_long_policy_2_name_fits_a_57_byte_directory) {
  const std::string dir = "/var/snap/microk8s/common/var/lib/kubelet/device-plugins/";
  BOOST_REQUIRE(dir.size() == 57u);
  const std::string path = dir + PluginSocketName("K100-AI_64G_120CU-share-120c-64g", InstanceId());
  BOOST_TEST(path.size() <= kMaxUnixSocketPath, path);
}

// A listener whose backlog is full (a frozen process) makes a blocking
// connect() wait forever; the sweep must not, and must leave it alone.
BOOST_AUTO_TEST_CASE(a_listener_with_a_full_backlog_is_left_alone_at_once) {
  SocketDir dir;
  const std::string frozen = dir.path + "/hygon.com_hcu@1-frozen.sock";
  int l = BindAt(frozen, false);
  BOOST_REQUIRE(::listen(l, 0) == 0);
  std::vector<int> queued;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, frozen.c_str(), sizeof addr.sun_path - 1);
  for (int i = 0; i < 64; ++i) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      BOOST_REQUIRE(errno == EAGAIN);
      ::close(fd);
      break;
    }
    queued.push_back(fd);
  }
  auto swept =
      std::async(std::launch::async, [&] { return PluginManager::RemoveStaleSockets(dir.path); });
  bool prompt = swept.wait_for(std::chrono::seconds(2)) == std::future_status::ready;
  ::close(l);  // releases a blocked connect(), so the test ends either way
  for (int fd : queued) ::close(fd);
  BOOST_TEST(prompt, "the sweep blocked on a frozen listener");
  BOOST_TEST(swept.get() == 0);
  BOOST_TEST(Exists(frozen));
}

BOOST_AUTO_TEST_CASE(stale_sockets_go_live_ones_and_others_stay) {
  SocketDir dir;
  const std::string stale = dir.path + "/hygon.com_hcu@1-a.sock";
  const std::string live = dir.path + "/hygon.com_hcu@2-b.sock";
  const std::string foreign = dir.path + "/kubelet.sock";
  int s = BindAt(stale, false);
  ::close(s);  // file stays, nobody listens
  int l = BindAt(live, true);
  int k = BindAt(foreign, false);
  ::close(k);
  BOOST_TEST(PluginManager::RemoveStaleSockets(dir.path) == 1);
  BOOST_TEST(!Exists(stale));
  BOOST_TEST(Exists(live));
  BOOST_TEST(Exists(foreign));
  ::close(l);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::daemon
