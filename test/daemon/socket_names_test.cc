#include "socket_names.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <cstring>

namespace hcudp::daemon {
namespace {

struct Dir {
  std::string path;
  Dir() {
    char tmpl[] = "/tmp/hcudp-sock-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~Dir() { std::system(("rm -rf " + path).c_str()); }
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
  std::string name = SocketFileName("hcu-share-15c-8g", "123-18c");
  BOOST_TEST(name == "hygon.com_hcu-share-15c-8g@123-18c.sock");
  BOOST_TEST(*LastNameFromSocketFile(name) == "hcu-share-15c-8g");
}

BOOST_AUTO_TEST_CASE(other_files_are_not_ours) {
  for (const char* f : {"kubelet.sock", "hygon.com_hcu", "hygon.com_hcu.sock", "hygon.com_@1.sock",
                        "nvidia.com_gpu@1.sock", "hygon.com_hcu@1"}) {
    BOOST_TEST_CONTEXT(f) { BOOST_TEST(!LastNameFromSocketFile(f).has_value()); }
  }
}

BOOST_AUTO_TEST_CASE(instance_is_pid_dash_hex_and_stable) {
  std::string id = InstanceId();
  BOOST_TEST(id == InstanceId());
  BOOST_TEST(id.find(std::to_string(::getpid()) + "-") == 0u);
}

BOOST_AUTO_TEST_CASE(stale_sockets_go_live_ones_and_others_stay) {
  Dir dir;
  const std::string stale = dir.path + "/hygon.com_hcu@1-a.sock";
  const std::string live = dir.path + "/hygon.com_hcu@2-b.sock";
  const std::string foreign = dir.path + "/kubelet.sock";
  int s = BindAt(stale, false);
  ::close(s);  // file stays, nobody listens
  int l = BindAt(live, true);
  int k = BindAt(foreign, false);
  ::close(k);
  BOOST_TEST(RemoveStaleSockets(dir.path) == 1);
  BOOST_TEST(!Exists(stale));
  BOOST_TEST(Exists(live));
  BOOST_TEST(Exists(foreign));
  ::close(l);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::daemon
