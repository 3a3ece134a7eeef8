// FakePluginWatcher's record of one registered plugin, shared by its two
// source files (registration; calls and health streams). Test-only.
#ifndef HCUDP_TEST_FAKE_KUBELET_FAKE_PLUGIN_WATCHER_PLUGIN_H_
#define HCUDP_TEST_FAKE_KUBELET_FAKE_PLUGIN_WATCHER_PLUGIN_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "dra_v1beta1.grpc.pb.h"
#include "fake_kubelet/fake_plugin_watcher.h"

namespace hcudp::testing {

namespace drav1beta1 = ::k8s::io::kubelet::pkg::apis::dra::v1beta1;

struct FakePluginWatcher::Plugin {
  std::string driver;
  std::string socket_path;
  std::string endpoint;
  std::string chosen_service;
  std::string health_service;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<drav1::DRAPlugin::Stub> v1;
  std::unique_ptr<drav1beta1::DRAPlugin::Stub> v1beta1;

  std::mutex mu;
  std::condition_variable cv;
  bool closed = false;                        // guarded by mu
  grpc::ClientContext* health_ctx = nullptr;  // guarded by mu
  std::thread health;
};

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_FAKE_KUBELET_FAKE_PLUGIN_WATCHER_PLUGIN_H_
