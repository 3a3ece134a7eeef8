#include "fake_apiserver/fake_apiserver_process.h"

#include <fcntl.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <thread>

#include "kube/http_request.h"

namespace hcudp::testing {
namespace {

std::string JsonString(const rapidjson::Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  return it != obj.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

}  // namespace

FakeApiServer::FakeApiServer(FakeApiServerOptions options) {
  std::vector<std::string> argv = {"/usr/bin/python3",
                                   HCUDP_FAKE_APISERVER_PY,
                                   "--dir",
                                   dir_.path(),
                                   "--event-window",
                                   std::to_string(options.event_window),
                                   "--watch-timeout-s",
                                   std::to_string(options.watch_timeout_s),
                                   "--bookmark-interval-ms",
                                   std::to_string(options.bookmark_interval_ms),
                                   "--watch-timeout-min-s",
                                   std::to_string(options.watch_timeout_min_s)};
  std::string log = dir_.Join("server.log");
  pid_ = fork();
  BOOST_REQUIRE(pid_ >= 0);
  if (pid_ == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!PathExists(dir_.Join("ready.json"))) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      BOOST_FAIL("fake apiserver exited early: " << ReadFile(log));
    }
    BOOST_REQUIRE_MESSAGE(std::chrono::steady_clock::now() < deadline,
                          "fake apiserver not ready after 20 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  rapidjson::Document ready;
  std::string text = ReadFile(dir_.Join("ready.json"));
  ready.Parse(text.c_str());
  BOOST_REQUIRE(!ready.HasParseError() && ready.IsObject() && ready.HasMember("port"));
  port_ = ready["port"].GetInt();
}

FakeApiServer::~FakeApiServer() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  int status = 0;
  while (waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string FakeApiServer::server_url() const {
  return "https://127.0.0.1:" + std::to_string(port_);
}
std::string FakeApiServer::kubeconfig_path() const { return dir_.Join("kubeconfig"); }
std::string FakeApiServer::kubeconfig_cert_path() const { return dir_.Join("kubeconfig-cert"); }
std::string FakeApiServer::ca_file() const { return dir_.Join("ca.crt"); }
std::string FakeApiServer::wrong_ca_file() const { return dir_.Join("wrong-ca.crt"); }
std::string FakeApiServer::client_cert_file() const { return dir_.Join("client.crt"); }
std::string FakeApiServer::client_key_file() const { return dir_.Join("client.key"); }
std::string FakeApiServer::token_file() const { return dir_.Join("token"); }
std::string FakeApiServer::token() const { return ReadFile(token_file()); }

void FakeApiServer::SetToken(const std::string& token) {
  // Write-then-rename so the server never reads a half-written token.
  WriteFile(token_file() + ".tmp", token);
  BOOST_REQUIRE(rename((token_file() + ".tmp").c_str(), token_file().c_str()) == 0);
}

FakeResponse FakeApiServer::Request(const std::string& method, const std::string& path,
                                    const std::string& body,
                                    const std::string& content_type) const {
  // The product's own HTTP client, one connection per request, trusting
  // the fake's CA alone (read afresh: a test may have rotated it).
  kube::HttpRequest request;
  request.method = method;
  request.url = server_url() + path;
  request.headers = {"Authorization: Bearer " + token(), "Content-Type: " + content_type};
  request.body = body;
  request.total_timeout_ms = 10000;
  kube::TlsMaterial tls;
  tls.ca_pem = ReadFile(ca_file());
  StatusOr<kube::HttpResponse> got = kube::Perform(tls, request);
  BOOST_REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  FakeResponse response;
  response.status = got->status;
  response.body = std::move(got->body);
  return response;
}

std::string FakeApiServer::MustRequest(const std::string& method, const std::string& path,
                                       const std::string& body,
                                       const std::string& content_type) const {
  FakeResponse r = Request(method, path, body, content_type);
  BOOST_REQUIRE_MESSAGE(r.status >= 200 && r.status < 300,
                        method << " " << path << " -> " << r.status << " " << r.body);
  return r.body;
}

void FakeApiServer::AddFault(const std::string& fault_json) const {
  MustRequest("POST", "/_fake/faults", fault_json);
}
void FakeApiServer::NeverAnswer(const std::string& method, const std::string& path_regex) const {
  std::string fault = R"({"hang":true,"count":-1,"user_agent":"^hcu-device-plugin/")";
  if (!method.empty()) fault += R"(,"method":")" + method + "\"";
  if (!path_regex.empty()) fault += R"(,"path":")" + path_regex + "\"";
  AddFault(fault + "}");
}
void FakeApiServer::ClearFaults() const { MustRequest("DELETE", "/_fake/faults"); }
void FakeApiServer::ClearRequests() const { MustRequest("DELETE", "/_fake/requests"); }
void FakeApiServer::CloseWatches() const { MustRequest("POST", "/_fake/close_watches"); }
void FakeApiServer::Compact() const { MustRequest("POST", "/_fake/compact"); }

double MonotonicSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

void FakeApiServer::AddTokens(const std::map<std::string, std::string>& token_to_user) const {
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  w.StartObject();
  for (const auto& [token, user] : token_to_user) {
    w.Key(token.c_str());
    w.String(user.c_str());
  }
  w.EndObject();
  MustRequest("POST", "/_fake/tokens", out.GetString());
}

double FakeApiServer::StartOutage(double seconds, bool restart) const {
  rapidjson::Document doc;
  const std::string body = MustRequest("POST", "/_fake/outage",
                                       "{\"seconds\":" + std::to_string(seconds) +
                                           ",\"restart\":" + (restart ? "true" : "false") + "}");
  doc.Parse(body.c_str());
  BOOST_REQUIRE(!doc.HasParseError() && doc.IsObject() && doc.HasMember("end") &&
                doc["end"].IsNumber());
  return doc["end"].GetDouble();
}

std::map<std::string, int> FakeApiServer::OpenWatches() const {
  rapidjson::Document doc;
  const std::string body = MustRequest("GET", "/_fake/watches");
  doc.Parse(body.c_str());
  BOOST_REQUIRE(!doc.HasParseError() && doc.IsObject());
  std::map<std::string, int> out;
  for (const auto& m : doc.GetObject()) {
    if (m.value.IsInt()) out[m.name.GetString()] = m.value.GetInt();
  }
  return out;
}

std::vector<FakeRequest> FakeApiServer::Requests() const { return RequestsSince(-1); }

std::vector<FakeRequest> FakeApiServer::RequestsSince(double since) const {
  // Every request when `since` is negative (the log's times are positive).
  std::string body = MustRequest(
      "GET", since < 0 ? "/_fake/requests" : "/_fake/requests?since=" + std::to_string(since));
  rapidjson::Document doc;
  doc.Parse(body.c_str());
  BOOST_REQUIRE(!doc.HasParseError() && doc.IsArray());
  std::vector<FakeRequest> out;
  for (const auto& r : doc.GetArray()) {
    FakeRequest f;
    f.method = JsonString(r, "method");
    f.path = JsonString(r, "path");
    f.query = JsonString(r, "query");
    f.content_type = JsonString(r, "content_type");
    f.watch = r.HasMember("watch") && r["watch"].IsBool() && r["watch"].GetBool();
    f.peer_port = r.HasMember("peer_port") && r["peer_port"].IsInt() ? r["peer_port"].GetInt() : 0;
    f.t = r.HasMember("t") && r["t"].IsNumber() ? r["t"].GetDouble() : 0;
    f.user = JsonString(r, "user");
    f.verb = JsonString(r, "verb");
    f.resource = JsonString(r, "resource");
    f.status = r.HasMember("status") && r["status"].IsInt() ? r["status"].GetInt() : 0;
    out.push_back(std::move(f));
  }
  return out;
}

int CountRequests(const std::vector<FakeRequest>& requests, const std::string& method,
                  const std::string& path, bool watch) {
  int n = 0;
  for (const FakeRequest& r : requests) {
    if (r.method == method && r.path == path && r.watch == watch) ++n;
  }
  return n;
}

}  // namespace hcudp::testing
