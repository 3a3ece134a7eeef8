#include "vendor/node_files.h"

#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "hcudp_internal/file_util.h"

namespace hcudp::vendor {
namespace {

bool ReadTrimmed(const std::string& path, std::string* out) {
  StatusOr<std::string> text = file_util::ReadFile(path);
  if (!text.ok()) return false;
  std::string s = std::move(*text);
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  *out = s;
  return true;
}

bool ReadHex(const std::string& path, unsigned long* out) {
  std::string text;
  if (!ReadTrimmed(path, &text) || text.empty()) return false;
  char* end = nullptr;
  *out = std::strtoul(text.c_str(), &end, 16);
  return end != nullptr && *end == '\0';
}

}  // namespace

bool DriverModuleLive(const internal::HostFs& fs, std::string* state) {
  for (const char* module : kDriverModules) {
    std::string text;
    if (ReadTrimmed(fs.DriverModuleFile(module, "initstate"), &text)) {
      if (state != nullptr) *state = text;
      return text == "live";
    }
  }
  if (state != nullptr) *state = "not loaded";
  return false;
}

StatusOr<std::string> DriverModuleVersion(const internal::HostFs& fs) {
  for (const char* module : kDriverModules) {
    std::string text;
    if (ReadTrimmed(fs.DriverModuleFile(module, "version"), &text) && !text.empty()) {
      return text;
    }
  }
  return NotFoundError("no driver version in " + fs.DriverModuleFile("hycu", "version") +
                       " (or hydcu)");
}

std::vector<PciHcu> ScanPciHcus(const internal::HostFs& fs) {
  std::vector<PciHcu> found;
  const std::string dir = fs.PciDevicesDir();
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return found;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    unsigned long vendor = 0, pci_class = 0, device = 0;
    std::string base = dir;
    base.append("/").append(name).append("/");
    if (!ReadHex(base + "vendor", &vendor) || vendor != 0x1d94) continue;
    if (!ReadHex(base + "class", &pci_class)) continue;
    const unsigned long class_prefix = pci_class >> 8;  // 0x038000 -> 0x0380
    if (class_prefix != 0x0380 && class_prefix != 0x0b40) continue;
    ReadHex(base + "device", &device);
    std::string bdf = name;
    std::transform(bdf.begin(), bdf.end(), bdf.begin(), ::tolower);
    found.push_back(PciHcu{bdf, static_cast<uint16_t>(device)});
  }
  closedir(d);
  std::sort(found.begin(), found.end(),
            [](const PciHcu& a, const PciHcu& b) { return a.bdf < b.bdf; });
  return found;
}

std::string FormatBdfId(uint64_t bdfid) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04x:%02x:%02x.%x",
                static_cast<unsigned>((bdfid >> 32) & 0xffffffffu),
                static_cast<unsigned>((bdfid >> 8) & 0xff),
                static_cast<unsigned>((bdfid >> 3) & 0x1f), static_cast<unsigned>(bdfid & 0x7));
  return buf;
}

std::string ModelForPciDeviceId(uint16_t device_id) {
  static const std::map<uint16_t, const char*> kModels = {
      {0x55b7, "Z100L"},      {0x55c7, "Z200SM_71"},    {0x55d7, "Z200SM_71_S"},
      {0x6210, "K100_AI"},    {0x6211, "K100_LC_E_AI"}, {0x6212, "K100_LC_AI"},
      {0x6213, "K100_AI_i"},  {0x62b7, "K100"},         {0x62c7, "K100-LC"},
      {0x6310, "BW200"},      {0x6311, "BW200_LC"},     {0x631a, "BW1000_H"},
      {0x6320, "BW150"},      {0x6321, "BW100_LC"},     {0x632a, "BW151"},
      {0x6330, "BW500SM"},    {0x6360, "BW10"},         {0x636a, "BW11"},
      {0x6370, "BW100"},      {0x637a, "BW101"},        {0x6423, "BW1500B"},
      {0x6430, "BW1100"},     {0x6431, "BW1000_LC"},    {0x6436, "BW3000B"},
      {0x6437, "BW3000B_LC"},
  };
  auto it = kModels.find(device_id);
  return it == kModels.end() ? std::string() : std::string(it->second);
}

}  // namespace hcudp::vendor
