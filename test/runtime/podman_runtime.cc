#include "runtime/podman_runtime.h"

#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>

namespace hcudp::testing {
namespace {

namespace fs = std::filesystem;

constexpr char kPrefix[] = "hcudp-runtime-test";
constexpr char kImage[] = "localhost/hcudp-runtime-test:busybox";
constexpr char kSpecDir[] = "/var/run/cdi";
// The busybox applets the container's script uses.
const char* const kApplets[] = {"sh",  "find", "sort", "readlink", "cat", "env",
                                "stat", "echo", "test", "[",        "ls"};

// podman with a 120 s deadline (timeout exits 124).
RunResult Podman(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/timeout", "120", "podman"};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv);
}

void RemoveLeftovers() {
  RunResult ps = Podman({"ps", "-a", "--format", "{{.Names}}"});
  std::istringstream names(ps.out);
  for (std::string name; std::getline(names, name);) {
    if (name.rfind(kPrefix, 0) == 0) Podman({"rm", "-f", name});
  }
  Podman({"rmi", "-f", kImage});
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kSpecDir, ec)) {
    if (e.path().filename().string().rfind(kPrefix, 0) == 0) fs::remove(e.path(), ec);
  }
}

std::string Str(const rapidjson::Value& v, const char* key) {
  if (!v.IsObject() || !v.HasMember(key) || !v[key].IsString()) return "";
  return v[key].GetString();
}

void SetStr(rapidjson::Value& v, const char* key, const std::string& s,
            rapidjson::Document::AllocatorType& a) {
  if (v.HasMember(key)) {
    v[key].SetString(s.c_str(), static_cast<rapidjson::SizeType>(s.size()), a);
  } else {
    v.AddMember(rapidjson::Value(key, a),
                rapidjson::Value(s.c_str(), static_cast<rapidjson::SizeType>(s.size()), a), a);
  }
}

// A character device 1:3 at `path` in place of the sim's empty file.
void MakeHarmlessNode(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode)) return;
  fs::create_directories(fs::path(path).parent_path());
  ::unlink(path.c_str());
  BOOST_REQUIRE_MESSAGE(::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0,
                        "mknod " << path << ": " << std::strerror(errno));
}

// Moves the host paths of one containerEdits object under `root`; drops
// mounts into /sys and names them in `dropped`.
void Relocate(rapidjson::Value& edits, const std::string& root,
              rapidjson::Document::AllocatorType& a, std::vector<std::string>* dropped) {
  if (!edits.IsObject()) return;
  if (edits.HasMember("deviceNodes")) {
    for (auto& node : edits["deviceNodes"].GetArray()) {
      std::string host = Str(node, "hostPath");
      if (host.empty()) host = Str(node, "path");
      MakeHarmlessNode(root + host);
      SetStr(node, "hostPath", root + host, a);
    }
  }
  if (edits.HasMember("mounts")) {
    auto& mounts = edits["mounts"];
    for (auto it = mounts.Begin(); it != mounts.End();) {
      const std::string container = Str(*it, "containerPath");
      if (container.rfind("/sys/", 0) == 0) {
        dropped->push_back(container);
        it = mounts.Erase(it);
        continue;
      }
      SetStr(*it, "hostPath", root + Str(*it, "hostPath"), a);
      ++it;
    }
  }
  if (edits.HasMember("hooks")) {
    for (auto& hook : edits["hooks"].GetArray()) SetStr(hook, "path", root + Str(hook, "path"), a);
  }
}

rapidjson::Document ParseSpec(const std::string& path) {
  rapidjson::Document doc;
  const std::string text = ReadFile(path);
  doc.Parse(text.c_str());
  BOOST_REQUIRE_MESSAGE(!doc.HasParseError() && doc.IsObject(), path << " is not a JSON object");
  return doc;
}

// The shell script a container runs: one tagged line per fact.
std::string Script(const std::vector<std::string>& read) {
  std::string s =
      "env | sed 's/^/ENV /'; "
      "find /dev | sort | sed 's/^/DEV /'; "
      "for f in $(find /dev -type c); do echo \"CHR $f $(stat -c %t:%T $f)\"; done; "
      "for l in /dev/dri/by-path/*; do [ -L \"$l\" ] && echo \"LINK $l $(readlink $l)\"; done; ";
  for (const std::string& f : read) {
    s += "echo 'BEGIN " + f + "'; cat '" + f + "'; echo; echo 'END " + f + "'; ";
  }
  return s + "true";
}

ContainerView ParseView(const RunResult& r, const std::vector<std::string>& read) {
  ContainerView v;
  v.exit_code = r.exit_code;
  v.output = r.out + r.err;
  std::istringstream in(r.out);
  std::string reading;
  std::string content;
  for (std::string line; std::getline(in, line);) {
    if (!reading.empty()) {
      if (line == "END " + reading) {
        if (!content.empty()) content.pop_back();  // the echo's newline
        v.files[reading] = content;
        reading.clear();
        content.clear();
      } else {
        content += line + "\n";
      }
      continue;
    }
    if (line.rfind("ENV ", 0) == 0) {
      const size_t eq = line.find('=');
      if (eq != std::string::npos) v.env[line.substr(4, eq - 4)] = line.substr(eq + 1);
    } else if (line.rfind("DEV ", 0) == 0) {
      v.dev.insert(line.substr(4));
    } else if (line.rfind("CHR ", 0) == 0) {
      const size_t sp = line.find(' ', 4);
      v.char_devs[line.substr(4, sp - 4)] = line.substr(sp + 1);
    } else if (line.rfind("LINK ", 0) == 0) {
      const size_t sp = line.find(' ', 5);
      v.links[line.substr(5, sp - 5)] = line.substr(sp + 1);
    } else if (line.rfind("BEGIN ", 0) == 0) {
      reading = line.substr(6);
    }
  }
  (void)read;
  return v;
}

}  // namespace

PodmanRuntime::PodmanRuntime() : made_spec_dir_(!fs::exists(kSpecDir)) {
  RemoveLeftovers();
  // A busybox root file system, imported: no registry involved.
  const std::string rootfs = dir_.Join("rootfs");
  fs::create_directories(rootfs + "/bin");
  fs::create_directories(rootfs + "/tmp");
  fs::copy_file("/bin/busybox", rootfs + "/bin/busybox");
  for (const char* applet : kApplets) fs::create_symlink("busybox", rootfs + "/bin/" + applet);
  fs::create_symlink("busybox", rootfs + "/bin/sed");
  RunResult tar = ::hcudp::testing::Run({"/bin/tar", "-C", rootfs, "-cf", dir_.Join("rootfs.tar"), "."});
  BOOST_REQUIRE_MESSAGE(tar.exit_code == 0, tar.err);
  RunResult import = Podman({"import", "--quiet", "--change", "ENV PATH=/bin", dir_.Join("rootfs.tar"), kImage});
  BOOST_REQUIRE_MESSAGE(import.exit_code == 0, "podman import: " << import.out << import.err);
}

PodmanRuntime::~PodmanRuntime() {
  Uninstall();
  RemoveLeftovers();
  if (made_spec_dir_) ::rmdir(kSpecDir);  // only when empty: someone else's specs stay
}

std::vector<std::string> PodmanRuntime::Install(const std::string& spec_path,
                                                const std::string& host_root) {
  rapidjson::Document doc = ParseSpec(spec_path);
  auto& a = doc.GetAllocator();
  std::vector<std::string> dropped;
  if (doc.HasMember("containerEdits")) Relocate(doc["containerEdits"], host_root, a, &dropped);
  if (doc.HasMember("devices")) {
    for (auto& d : doc["devices"].GetArray()) {
      if (d.HasMember("containerEdits")) Relocate(d["containerEdits"], host_root, a, &dropped);
    }
  }
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
  doc.Accept(w);
  fs::create_directories(kSpecDir);
  const std::string out = std::string(kSpecDir) + "/" + kPrefix + "-" +
                          std::to_string(installed_.size()) + "-" +
                          fs::path(spec_path).filename().string();
  WriteFile(out, std::string(buffer.GetString(), buffer.GetSize()));
  installed_.push_back(out);
  return dropped;
}

void PodmanRuntime::Uninstall() {
  for (const std::string& f : installed_) ::unlink(f.c_str());
  installed_.clear();
}

ContainerView PodmanRuntime::Run(const std::vector<std::string>& devices,
                                 const std::vector<std::string>& read) {
  const std::string name = std::string(kPrefix) + "-" + std::to_string(::getpid()) + "-" +
                           std::to_string(containers_++);
  // runc, not crun (crun cannot run on hosts with hybrid cgroups); runc
  // cannot raise podman's default rlimits here, so they are given.
  std::vector<std::string> args = {"run",      "--rm",     "--name",    name,
                                   "--runtime", "runc",    "--network", "none",
                                   "--ulimit", "nofile=1024:1024", "--ulimit",
                                   "nproc=1000:1000"};
  for (const std::string& d : devices) {
    args.push_back("--device");
    args.push_back(d);
  }
  args.insert(args.end(), {kImage, "/bin/sh", "-c", Script(read)});
  RunResult r = Podman(args);
  Podman({"rm", "-f", name});  // after a timeout or a failed start
  return ParseView(r, read);
}

SpecEdits EditsOf(const std::string& spec_path, const std::string& name) {
  rapidjson::Document doc = ParseSpec(spec_path);
  SpecEdits out;
  out.cdi_version = Str(doc, "cdiVersion");
  auto add = [&](const rapidjson::Value& edits) {
    if (!edits.IsObject()) return;
    if (edits.HasMember("deviceNodes")) {
      for (const auto& n : edits["deviceNodes"].GetArray()) out.device_nodes.insert(Str(n, "path"));
    }
    if (edits.HasMember("mounts")) {
      for (const auto& m : edits["mounts"].GetArray()) out.mounts.insert(Str(m, "containerPath"));
    }
    if (edits.HasMember("env")) {
      for (const auto& e : edits["env"].GetArray()) out.env.push_back(e.GetString());
    }
    if (edits.HasMember("hooks")) {
      for (const auto& h : edits["hooks"].GetArray()) {
        std::string prev;
        for (const auto& arg : h["args"].GetArray()) {
          const std::string s = arg.GetString();
          if (prev == "--link") {
            const size_t sep = s.find("::");
            out.links[s.substr(sep + 2)] = s.substr(0, sep);
          }
          prev = s;
        }
      }
    }
  };
  if (doc.HasMember("containerEdits")) add(doc["containerEdits"]);
  bool found = false;
  for (const auto& d : doc["devices"].GetArray()) {
    if (Str(d, "name") != name) continue;
    found = true;
    if (d.HasMember("containerEdits")) add(d["containerEdits"]);
  }
  BOOST_REQUIRE_MESSAGE(found, spec_path << " has no device " << name);
  return out;
}

}  // namespace hcudp::testing
