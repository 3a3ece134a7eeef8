// The file module's explicit choices (hcudp_internal/file_util.h): a read
// past its limit is an error, atomic writes use unique temp names, never
// follow a symlink at the temp path, and set the mode exactly; MakeDirs
// creates with the mode and leaves existing directories alone.
#include "hcudp_internal/file_util.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "testing/testutil.h"

namespace hcudp::file_util {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  BOOST_REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
  return names;
}

// Sets the umask for a scope.
class Umask {
 public:
  explicit Umask(mode_t mask) : old_(::umask(mask)) {}
  ~Umask() { ::umask(old_); }

 private:
  mode_t old_;
};

BOOST_AUTO_TEST_SUITE(file_util)

BOOST_AUTO_TEST_CASE(read_file_returns_the_bytes_up_to_the_limit_and_fails_past_it) {
  TempDir dir;
  const std::string path = dir.Join("f");
  testing::WriteFile(path, std::string(100, 'x'));
  StatusOr<std::string> exact = ReadFile(path, 100);
  BOOST_REQUIRE_MESSAGE(exact.ok(), exact.status().ToString());
  BOOST_TEST(*exact == std::string(100, 'x'));

  StatusOr<std::string> over = ReadFile(path, 99);
  BOOST_REQUIRE(!over.ok());
  BOOST_TEST((over.status().code() == StatusCode::kInvalidArgument));
  BOOST_TEST(over.status().message().find(path) != std::string::npos, over.status().message());
  BOOST_TEST(over.status().message().find("99") != std::string::npos, over.status().message());
}

BOOST_AUTO_TEST_CASE(read_file_of_an_endless_file_stops_at_the_limit) {
  StatusOr<std::string> zero = ReadFile("/dev/zero", 1 << 16);
  BOOST_REQUIRE(!zero.ok());
  BOOST_TEST((zero.status().code() == StatusCode::kInvalidArgument));
}

BOOST_AUTO_TEST_CASE(read_file_of_a_missing_file_is_not_found_naming_it) {
  TempDir dir;
  StatusOr<std::string> missing = ReadFile(dir.Join("nope"));
  BOOST_REQUIRE(!missing.ok());
  BOOST_TEST((missing.status().code() == StatusCode::kNotFound));
  BOOST_TEST(missing.status().message().find(dir.Join("nope")) != std::string::npos);
}

BOOST_AUTO_TEST_CASE(write_file_atomic_sets_the_mode_exactly_whatever_the_umask) {
  TempDir dir;
  Umask mask(0077);
  const std::string path = dir.Join("spec.json");
  for (Durability d :
       {Durability::kNoSync, Durability::kSyncFile, Durability::kSyncFileAndDirectory}) {
    BOOST_REQUIRE(WriteFileAtomic(path, "{}", 0644, d).ok());
    BOOST_TEST(ModeOf(path) == 0644u);
    BOOST_TEST(testing::ReadFile(path) == "{}");
  }
  BOOST_REQUIRE(WriteFileAtomic(path, "{}", 0600, Durability::kSyncFile).ok());
  BOOST_TEST(ModeOf(path) == 0600u);
  BOOST_TEST(Entries(dir.path()) == std::vector<std::string>{"spec.json"});  // no temp left
}

BOOST_AUTO_TEST_CASE(write_file_in_place_truncates_sets_the_mode_and_never_follows_a_symlink) {
  TempDir dir;
  Umask mask(0077);
  const std::string path = dir.Join("mark");
  testing::WriteFile(path, "an older, longer content");
  for (Durability d :
       {Durability::kNoSync, Durability::kSyncFile, Durability::kSyncFileAndDirectory}) {
    BOOST_REQUIRE(WriteFileInPlace(path, "now", 0644, d).ok());
    BOOST_TEST(testing::ReadFile(path) == "now");
    BOOST_TEST(ModeOf(path) == 0644u);
  }
  BOOST_TEST(Entries(dir.path()) == std::vector<std::string>{"mark"});  // no temp file
  const std::string victim = dir.Join("victim");
  testing::WriteFile(victim, "precious");
  fs::create_symlink(victim, dir.Join("link"));
  Status st = WriteFileInPlace(dir.Join("link"), "x", 0644, Durability::kNoSync);
  BOOST_TEST(!st.ok());
  BOOST_TEST(st.message().find(dir.Join("link")) != std::string::npos, st.message());
  BOOST_TEST(testing::ReadFile(victim) == "precious");
}

BOOST_AUTO_TEST_CASE(a_symlink_at_the_temp_path_is_not_followed) {
  TempDir dir;
  const std::string victim = dir.Join("victim");
  testing::WriteFile(victim, "precious");
  const std::string path = dir.Join("target");
  const std::string planted = NextTempPathForTesting(path);
  BOOST_TEST(planted.find(dir.path() + "/.target.") == 0u, planted);
  BOOST_TEST(planted.substr(planted.size() - kTempSuffix.size()) == std::string(kTempSuffix));
  fs::create_symlink(victim, planted);

  BOOST_REQUIRE(WriteFileAtomic(path, "new", 0644, Durability::kSyncFile).ok());
  BOOST_TEST(testing::ReadFile(victim) == "precious");
  BOOST_TEST(testing::ReadFile(path) == "new");
  BOOST_TEST(fs::is_symlink(planted));  // skipped, not replaced or removed
}

BOOST_AUTO_TEST_CASE(concurrent_writers_of_one_file_never_share_a_temp_file) {
  TempDir dir;
  const std::string path = dir.Join("shared");
  constexpr int kWriters = 6;
  constexpr int kWrites = 40;
  constexpr size_t kSize = 64 * 1024;  // several write() calls' worth
  std::atomic<int> failures{0};
  std::atomic<bool> done{false};
  std::atomic<int> torn{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      const std::string content(kSize, static_cast<char>('a' + w));
      for (int i = 0; i < kWrites; ++i) {
        if (!WriteFileAtomic(path, content, 0644, Durability::kNoSync).ok()) ++failures;
      }
    });
  }
  // A reader sees one writer's whole content every time, never a mix.
  std::thread reader([&] {
    while (!done) {
      StatusOr<std::string> text = ReadFile(path);
      if (!text.ok()) continue;  // before the first rename
      if (text->size() != kSize || text->find_first_not_of((*text)[0]) != std::string::npos) {
        ++torn;
      }
    }
  });
  for (std::thread& t : writers) t.join();
  done = true;
  reader.join();
  BOOST_TEST(failures.load() == 0);
  BOOST_TEST(torn.load() == 0);
  BOOST_TEST(Entries(dir.path()) == std::vector<std::string>{"shared"});
}

BOOST_AUTO_TEST_CASE(a_failed_write_leaves_the_target_and_no_temp_file) {
  TempDir dir;
  const std::string path = dir.Join("is_a_dir");
  fs::create_directory(path);
  fs::create_directory(path + "/inside");  // a non-empty directory: rename fails
  Status st = WriteFileAtomic(path, "x", 0644, Durability::kSyncFileAndDirectory);
  BOOST_TEST(!st.ok());
  BOOST_TEST(st.message().find(path) != std::string::npos, st.message());
  BOOST_TEST(fs::is_directory(path + "/inside"));
  BOOST_TEST(Entries(dir.path()) == std::vector<std::string>{"is_a_dir"});
}

BOOST_AUTO_TEST_CASE(make_dirs_creates_parents_with_the_mode_and_keeps_existing_modes) {
  TempDir dir;
  Umask mask(0077);
  fs::create_directory(dir.Join("old"));
  ::chmod(dir.Join("old").c_str(), 0700);
  BOOST_REQUIRE(MakeDirs(dir.Join("old/a/b"), 0750, Durability::kSyncFileAndDirectory).ok());
  BOOST_TEST(ModeOf(dir.Join("old")) == 0700u);
  BOOST_TEST(ModeOf(dir.Join("old/a")) == 0750u);
  BOOST_TEST(ModeOf(dir.Join("old/a/b")) == 0750u);
  BOOST_TEST(MakeDirs(dir.Join("old/a/b"), 0755).ok());  // exists: OK, mode kept
  BOOST_TEST(ModeOf(dir.Join("old/a/b")) == 0750u);
}

BOOST_AUTO_TEST_CASE(make_dirs_over_a_file_fails_naming_it) {
  TempDir dir;
  testing::WriteFile(dir.Join("f"), "x");
  for (const std::string& path : {dir.Join("f"), dir.Join("f/sub")}) {
    Status st = MakeDirs(path, 0755);
    BOOST_TEST(!st.ok());
    BOOST_TEST(st.message().find(dir.Join("f")) != std::string::npos, st.message());
  }
}

// A symbolic link to a missing target: stat() fails, mkdir() says EEXIST.
// An error naming it, not a retry loop that recurses until the stack ends.
BOOST_AUTO_TEST_CASE(make_dirs_over_a_dangling_symlink_fails_naming_it) {
  TempDir dir;
  BOOST_REQUIRE(::symlink(dir.Join("gone").c_str(), dir.Join("link").c_str()) == 0);
  for (const std::string& path : {dir.Join("link"), dir.Join("link/sub")}) {
    Status st = MakeDirs(path, 0755);
    BOOST_TEST(!st.ok());
    BOOST_TEST(st.message().find(dir.Join("link")) != std::string::npos, st.message());
  }
}

BOOST_AUTO_TEST_CASE(remove_file_of_a_missing_file_is_ok_and_list_sees_only_regular_files) {
  TempDir dir;
  BOOST_TEST(RemoveFile(dir.Join("none"), Durability::kSyncFileAndDirectory).ok());
  testing::WriteFile(dir.Join("b"), "");
  testing::WriteFile(dir.Join("a"), "");
  fs::create_directory(dir.Join("sub"));
  StatusOr<std::vector<std::string>> names = ListFileNames(dir.path());
  BOOST_REQUIRE(names.ok());
  BOOST_TEST(*names == (std::vector<std::string>{"a", "b"}));
  BOOST_TEST(RemoveFile(dir.Join("a")).ok());
  BOOST_TEST(!fs::exists(dir.Join("a")));
  StatusOr<std::vector<std::string>> none = ListFileNames(dir.Join("missing"));
  BOOST_REQUIRE(none.ok());
  BOOST_TEST(none->empty());
}

BOOST_AUTO_TEST_CASE(read_regular_file_reads_only_a_regular_file_and_never_blocks) {
  TempDir dir;
  const std::string file = dir.Join("conf");
  testing::WriteFile(file, "text\n");
  StatusOr<std::string> read = ReadRegularFile(file);
  BOOST_REQUIRE_MESSAGE(read.ok(), read.status().ToString());
  BOOST_TEST(*read == "text\n");

  // Opening a FIFO for reading would wait for a writer: it is refused
  // without a wait (this test would hang otherwise).
  const std::string fifo = dir.Join("fifo");
  BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  const std::string link = dir.Join("link");
  fs::create_symlink(file, link);
  const std::string sub = dir.Join("sub");
  fs::create_directory(sub);
  struct Case {
    std::string path;
    const char* what;
  };
  for (const Case& c : {Case{fifo, "a FIFO"}, Case{link, "a symbolic link"},
                        Case{sub, "a directory"}, Case{"/dev/zero", "a device"}}) {
    StatusOr<std::string> refused = ReadRegularFile(c.path);
    BOOST_TEST_CONTEXT(c.path) {
      BOOST_REQUIRE(!refused.ok());
      BOOST_TEST((refused.status().code() == StatusCode::kFailedPrecondition));
      BOOST_TEST(refused.status().message() == c.path + ": " + c.what + ", not a regular file");
    }
  }
}

BOOST_AUTO_TEST_CASE(read_regular_file_keeps_the_limit_and_names_a_missing_file) {
  TempDir dir;
  const std::string path = dir.Join("f");
  testing::WriteFile(path, std::string(100, 'x'));
  BOOST_TEST(ReadRegularFile(path, 100).ok());
  StatusOr<std::string> over = ReadRegularFile(path, 99);
  BOOST_REQUIRE(!over.ok());
  BOOST_TEST((over.status().code() == StatusCode::kInvalidArgument));
  BOOST_TEST(over.status().message() == path + ": larger than 99 bytes");
  StatusOr<std::string> missing = ReadRegularFile(dir.Join("nope"));
  BOOST_TEST((missing.status().code() == StatusCode::kNotFound));
  BOOST_TEST(missing.status().message().find(dir.Join("nope")) != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::file_util
