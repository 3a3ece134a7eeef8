// The sim's node loader opens the file once, non-blocking, and judges what
// it opened (issue 10 item 8): a FIFO swapped in between a size check and
// the open must not block the caller (the node watcher's thread).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdio>
#include <future>
#include <thread>

#include "hcudp/sim_node.h"
#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

BOOST_AUTO_TEST_SUITE(sim_loader)

BOOST_AUTO_TEST_CASE(a_fifo_is_refused_at_once) {
  TempDir dir;
  const std::string path = dir.Join("node.yaml");
  BOOST_REQUIRE(::mkfifo(path.c_str(), 0644) == 0);
  auto loaded = std::async(std::launch::async, [&] { return LoadSimNode(path); });
  if (loaded.wait_for(std::chrono::seconds(2)) != std::future_status::ready) {
    // Let the blocked open return, and its read see end-of-file.
    while (loaded.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready) {
      int w = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
      if (w >= 0) ::close(w);
    }
    BOOST_FAIL("LoadSimNode blocked on a FIFO");
  }
  auto node = loaded.get();
  BOOST_REQUIRE(!node.ok());
  BOOST_TEST(node.status().message().find("not a regular file") != std::string::npos,
             node.status().ToString());
  BOOST_TEST(node.status().message().find(path) != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_fifo_swapped_in_while_loading_never_blocks) {
  // The node path is a symlink flipped between a good node file and a FIFO
  // as fast as possible while the loader runs again and again: a loader that
  // checks the file and then opens it again lands on the FIFO in between.
  TempDir dir;
  const std::string good = dir.Join("good.yaml");
  const std::string fifo = dir.Join("fifo");
  const std::string path = dir.Join("node.yaml");
  WriteFile(good, ReadFile(SourcePath("demo/nodes/k100ai-8.yaml")));
  BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  BOOST_REQUIRE(::symlink(good.c_str(), path.c_str()) == 0);
  std::atomic<bool> stop{false};
  std::thread flipper([&] {
    const std::string tmp = dir.Join("node.tmp");
    for (bool to_fifo = true; !stop; to_fifo = !to_fifo) {
      ::unlink(tmp.c_str());
      if (::symlink((to_fifo ? fifo : good).c_str(), tmp.c_str()) == 0) {
        ::rename(tmp.c_str(), path.c_str());
      }
    }
  });
  std::atomic<int> loads{0};
  std::atomic<int> good_loads{0};
  auto loader = std::async(std::launch::async, [&] {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
    while (std::chrono::steady_clock::now() < until) {
      if (LoadSimNode(path).ok()) ++good_loads;
      ++loads;
    }
  });
  bool blocked = loader.wait_for(std::chrono::seconds(5)) != std::future_status::ready;
  stop = true;
  flipper.join();
  if (blocked) {
    // Release the stuck open (it waits for a writer) so the test can end.
    while (loader.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready) {
      int w = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
      if (w >= 0) ::close(w);
    }
  }
  BOOST_TEST(!blocked, "LoadSimNode blocked on a FIFO swapped in after " << loads << " loads");
  BOOST_TEST_MESSAGE(loads << " loads, " << good_loads << " of the good file");
  BOOST_TEST(loads > 10);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
