// The memory/latency floor: a minimal grpc++ server with one service (the
// DevicePlugin service answering only GetDevicePluginOptions), built and
// linked the same way as the daemon. Usage: bench_floor_server SOCKET_PATH.
// Serves until SIGTERM.
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include "deviceplugin_v1beta1.grpc.pb.h"

namespace {

class FloorService final : public v1beta1::DevicePlugin::Service {
  grpc::Status GetDevicePluginOptions(grpc::ServerContext*, const v1beta1::Empty*,
                                      v1beta1::DevicePluginOptions*) override {
    return grpc::Status::OK;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  FloorService service;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(std::string("unix:") + argv[1], grpc::InsecureServerCredentials());
  builder.RegisterService(&service);
  auto server = builder.BuildAndStart();
  if (!server) return 1;
  int sig = 0;
  sigwait(&set, &sig);
  server->Shutdown();
  return 0;
}
