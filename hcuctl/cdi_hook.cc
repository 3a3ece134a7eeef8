#include "cdi_hook.h"

#include <fcntl.h>
#include <rapidjson/document.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <sstream>

#include "hcudp_internal/json_depth.h"

namespace hcuctl {
namespace {

constexpr char kLinkDir[] = "/dev/dri/by-path/";
constexpr size_t kMaxJsonBytes = 4 << 20;  // an OCI config is kilobytes

struct Link {
  std::string target;  // "../card1"
  std::string name;    // "pci-0000:09:00.0-card"
};

// A single path component: not empty, no '/', not "." or "..".
bool IsPlainName(const std::string& s) {
  return !s.empty() && s.find('/') == std::string::npos && s != "." && s != ".." &&
         s.find('\0') == std::string::npos;
}

// "../card1::/dev/dri/by-path/pci-0000:09:00.0-card"; empty `why` if good.
Link ParseLink(const std::string& spec, std::string* why) {
  Link link;
  const size_t sep = spec.find("::");
  if (sep == std::string::npos) {
    *why = "--link \"" + spec + "\" is not TARGET::LINK";
    return link;
  }
  link.target = spec.substr(0, sep);
  const std::string path = spec.substr(sep + 2);
  if (path.compare(0, std::strlen(kLinkDir), kLinkDir) != 0 ||
      !IsPlainName(path.substr(std::strlen(kLinkDir)))) {
    *why = "--link \"" + spec + "\": the link must be a name directly in " + kLinkDir;
    return link;
  }
  link.name = path.substr(std::strlen(kLinkDir));
  if (link.target.compare(0, 3, "../") != 0 || !IsPlainName(link.target.substr(3))) {
    *why = "--link \"" + spec + "\": the target must be ../<node in /dev/dri>";
  }
  return link;
}

// Deeper nesting than any OCI state or config has; RapidJSON's recursive
// parser overflows the stack on about a million '[' (4 MiB allows that).
constexpr int kMaxJsonDepth = 64;

bool ParseJson(const std::string& text, rapidjson::Document* doc, const std::string& what,
               std::string* why) {
  if (!hcudp::json_depth::NestingWithin(text, kMaxJsonDepth)) {
    *why = what + " nests deeper than " + std::to_string(kMaxJsonDepth) + " levels";
    return false;
  }
  // Iterative: no recursion even if the depth check above were wrong.
  doc->Parse<rapidjson::kParseIterativeFlag>(text.c_str(), text.size());
  if (doc->HasParseError() || !doc->IsObject()) {
    *why = what + " is not a JSON object";
    return false;
  }
  return true;
}

bool ReadJson(std::istream& in, rapidjson::Document* doc, const std::string& what,
              std::string* why) {
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxJsonBytes) {
      *why = what + " is larger than " + std::to_string(kMaxJsonBytes) + " bytes";
      return false;
    }
  }
  return ParseJson(text, doc, what, why);
}

// Reads `path` as JSON: a regular file only, opened without blocking, so a
// FIFO or a device at that name is refused instead of waited on forever.
bool ReadJsonFile(const std::string& path, rapidjson::Document* doc, std::string* why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    *why = "cannot read " + path + ": " + std::strerror(errno);
    return false;
  }
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *why = path + " is not a regular file";
  } else {
    char buf[65536];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        *why = "cannot read " + path + ": " + std::strerror(errno);
        break;
      }
      if (n == 0) break;
      text.append(buf, static_cast<size_t>(n));
      if (text.size() > kMaxJsonBytes) {
        *why = path + " is larger than " + std::to_string(kMaxJsonBytes) + " bytes";
        break;
      }
    }
  }
  ::close(fd);
  return why->empty() && ParseJson(text, doc, path, why);
}

std::string StringField(const rapidjson::Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || !it->value.IsString()) return "";
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

// The bundle from the OCI state on stdin; empty with `why` when the state is
// not one (the caller broke the hook's contract).
std::string Bundle(std::istream& state, std::string* why) {
  rapidjson::Document doc;
  if (!ReadJson(state, &doc, "the OCI state on stdin", why)) return "";
  const std::string bundle = StringField(doc, "bundle");
  if (bundle.empty() || bundle.front() != '/') {
    *why = "the OCI state on stdin has no absolute \"bundle\"";
    return "";
  }
  return bundle;
}

// The container's root file system: <bundle>/config.json's root.path,
// relative to the bundle unless absolute.
std::string RootFs(const std::string& bundle, std::string* why) {
  rapidjson::Document cfg;
  if (!ReadJsonFile(bundle + "/config.json", &cfg, why)) return "";
  auto root = cfg.FindMember("root");
  const std::string path = root == cfg.MemberEnd() || !root->value.IsObject()
                               ? std::string()
                               : StringField(root->value, "path");
  if (path.empty()) {
    *why = bundle + "/config.json has no root.path";
    return "";
  }
  return path.front() == '/' ? path : bundle + "/" + path;
}

// Opens dir/name as a directory without following a link; -1 with errno.
int OpenDirAt(int dir, const char* name) {
  return ::openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

// Makes every link in <rootfs>/dev/dri/by-path; "" or why not.
std::string MakeLinks(const std::string& rootfs, const std::vector<Link>& links) {
  int root = ::open(rootfs.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) return "cannot open the container root " + rootfs + ": " + std::strerror(errno);
  std::string why;
  int dev = OpenDirAt(root, "dev");
  int dri = dev < 0 ? -1 : OpenDirAt(dev, "dri");
  if (dri < 0) {
    why = rootfs + "/dev/dri is not a directory (or is a link): " + std::strerror(errno);
  } else if (::mkdirat(dri, "by-path", 0755) != 0 && errno != EEXIST) {
    why = "cannot make " + rootfs + "/dev/dri/by-path: " + std::strerror(errno);
  }
  int by_path = why.empty() ? OpenDirAt(dri, "by-path") : -1;
  if (why.empty() && by_path < 0) {
    why = rootfs + "/dev/dri/by-path is not a directory (or is a link): " + std::strerror(errno);
  }
  for (size_t i = 0; why.empty() && i < links.size(); ++i) {
    const Link& l = links[i];
    if (::symlinkat(l.target.c_str(), by_path, l.name.c_str()) == 0) continue;
    if (errno != EEXIST) {
      why = "cannot link " + l.name + ": " + std::strerror(errno);
      break;
    }
    // Already there (a restarted container): keep it if it is ours, else replace.
    char buf[4096];
    ssize_t n = ::readlinkat(by_path, l.name.c_str(), buf, sizeof buf);
    if (n >= 0 && std::string(buf, static_cast<size_t>(n)) == l.target) continue;
    if (::unlinkat(by_path, l.name.c_str(), 0) != 0 ||
        ::symlinkat(l.target.c_str(), by_path, l.name.c_str()) != 0) {
      why = "cannot replace " + l.name + ": " + std::strerror(errno);
    }
  }
  for (int fd : {by_path, dri, dev, root}) {
    if (fd >= 0) ::close(fd);
  }
  return why;
}

}  // namespace

int RunCdiHook(const std::vector<std::string>& args, std::istream& state, std::ostream& err) {
  const char* usage =
      "usage: hcu-cdi-hook create-symlinks --link TARGET::LINK ... (OCI state on stdin)";
  if (args.empty() || args[0] != "create-symlinks") {
    err << "hcu-cdi-hook: "
        << (args.empty() ? "missing command" : "unknown command \"" + args[0] + "\"") << "\n"
        << usage << "\n";
    return 2;
  }
  std::vector<Link> links;
  for (size_t i = 1; i < args.size(); ++i) {
    std::string spec;
    if (args[i] == "--link" && i + 1 < args.size()) {
      spec = args[++i];
    } else if (args[i].rfind("--link=", 0) == 0) {
      spec = args[i].substr(7);
    } else {
      err << "hcu-cdi-hook: unexpected argument \"" << args[i] << "\"\n" << usage << "\n";
      return 2;
    }
    std::string why;
    links.push_back(ParseLink(spec, &why));
    if (!why.empty()) {
      err << "hcu-cdi-hook: " << why << "\n";
      return 2;
    }
  }
  std::string why;
  const std::string bundle = Bundle(state, &why);
  if (bundle.empty()) {
    err << "hcu-cdi-hook: " << why << "\n";
    return 2;
  }
  if (links.empty()) return 0;
  // The links are a convenience: a container starts without them, as with
  // Hygon's and NVIDIA's hooks, so from here on a failure is a warning.
  const std::string rootfs = RootFs(bundle, &why);
  if (!rootfs.empty()) why = MakeLinks(rootfs, links);
  if (!why.empty()) err << "hcu-cdi-hook: warning: no /dev/dri/by-path links: " << why << "\n";
  return 0;
}

}  // namespace hcuctl
