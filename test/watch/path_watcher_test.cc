#include "hcudp_internal/path_watcher.h"

#include <stdlib.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>

namespace hcudp {
namespace {

namespace fs = std::filesystem;

// A fresh directory, removed with its contents at the end.
struct WatchedDir {
  std::string path;
  WatchedDir() {
    std::string tmpl = (fs::temp_directory_path() / "hcudp-watch-XXXXXX").string();
    BOOST_REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = fs::canonical(tmpl).string();
  }
  ~WatchedDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string Join(const std::string& rel) const { return path + "/" + rel; }
};

void Touch(const std::string& path) { std::ofstream(path) << "x\n"; }

bool Watches(const PathWatcher& w, const std::string& dir) {
  auto dirs = w.WatchedDirs();
  return std::find(dirs.begin(), dirs.end(), dir) != dirs.end();
}

BOOST_AUTO_TEST_SUITE(path_watcher)

// Events are read synchronously: the kernel queues them before the file
// system call returns, so ReadEvents() right after sees them.
BOOST_AUTO_TEST_CASE(a_missing_directory_is_watched_once_it_appears) {
  WatchedDir d;
  PathWatcher w({d.Join("etc/vdev")});
  BOOST_REQUIRE(w.Open().ok());
  BOOST_TEST(Watches(w, d.path));
  BOOST_TEST(!Watches(w, d.Join("etc/vdev")));
  fs::create_directory(d.Join("unrelated"));
  BOOST_TEST(!w.ReadEvents());
  fs::create_directory(d.Join("etc"));
  BOOST_TEST(w.ReadEvents());
  fs::create_directory(d.Join("etc/vdev"));
  BOOST_TEST(w.ReadEvents());
  BOOST_TEST(Watches(w, d.Join("etc/vdev")));
  Touch(d.Join("etc/vdev/vdev6.conf"));
  BOOST_TEST(w.ReadEvents());
}

BOOST_AUTO_TEST_CASE(each_path_has_its_own_filter) {
  WatchedDir d;
  fs::create_directories(d.Join("vdev"));
  fs::create_directories(d.Join("sim"));
  Touch(d.Join("sim/node.yaml"));
  PathWatcher w({d.Join("sim/node.yaml"), d.Join("vdev")});
  BOOST_REQUIRE(w.Open().ok());
  // Any entry of a watched directory counts, whatever the file filters say.
  Touch(d.Join("vdev/vdev6.conf"));
  BOOST_TEST(w.ReadEvents());
  // Next to a watched file, only that file counts.
  Touch(d.Join("sim/node.yaml.tmp"));
  BOOST_TEST(!w.ReadEvents());
  fs::rename(d.Join("sim/node.yaml.tmp"), d.Join("sim/node.yaml"));
  BOOST_TEST(w.ReadEvents());
}

// An atomic write (file_util::WriteFileAtomic) makes a hidden "*.tmp" file
// in the watched directory, then renames it: only the rename counts.
BOOST_AUTO_TEST_CASE(the_temp_file_of_an_atomic_write_does_not_count_its_rename_does) {
  WatchedDir d;
  fs::create_directories(d.Join("vdev"));
  PathWatcher w({d.Join("vdev")});
  BOOST_REQUIRE(w.Open().ok());
  const std::string temp = d.Join("vdev/.vdev6.conf.123.0.tmp");
  Touch(temp);
  BOOST_TEST(!w.ReadEvents());
  fs::rename(temp, d.Join("vdev/vdev6.conf"));
  BOOST_TEST(w.ReadEvents());
  Touch(d.Join("vdev/vdev7.conf.tmp"));  // not hidden: another writer's file, counts
  BOOST_TEST(w.ReadEvents());
}

BOOST_AUTO_TEST_CASE(a_replaced_directory_is_watched_again) {
  WatchedDir d;
  fs::create_directories(d.Join("etc/vdev"));
  PathWatcher w({d.Join("etc/vdev")});
  BOOST_REQUIRE(w.Open().ok());
  fs::rename(d.Join("etc/vdev"), d.Join("etc/vdev.old"));
  fs::create_directory(d.Join("etc/vdev"));
  BOOST_TEST(w.ReadEvents());
  Touch(d.Join("etc/vdev.old/vdev1.conf"));
  BOOST_TEST(!w.ReadEvents());
  Touch(d.Join("etc/vdev/vdev1.conf"));
  BOOST_TEST(w.ReadEvents());
}

BOOST_AUTO_TEST_CASE(an_ancestor_moved_away_and_back_is_seen) {
  WatchedDir d;
  fs::create_directories(d.Join("root/etc/vdev"));
  PathWatcher w({d.Join("root/etc/vdev")});
  BOOST_REQUIRE(w.Open().ok());
  fs::rename(d.Join("root"), d.Join("root.away"));
  BOOST_TEST(w.ReadEvents());
  BOOST_TEST(!Watches(w, d.Join("root/etc/vdev")));
  fs::rename(d.Join("root.away"), d.Join("root"));
  BOOST_TEST(w.ReadEvents());
  BOOST_TEST(Watches(w, d.Join("root/etc/vdev")));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
