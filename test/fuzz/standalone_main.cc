// A libFuzzer stand-in for builds without clang: feeds every corpus file to
// LLVMFuzzerTestOneInput, then a fixed number of deterministic mutations of
// them (byte flips, truncations, splices, insertions of syntax tokens),
// stopping early when the time budget is spent. A crash or an abort in the
// target fails the run, as under libFuzzer.
//
//   fuzz_<name> [--mutations=N] [--max_seconds=S] <file-or-dir>...
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

// splitmix64: tiny, deterministic, good enough to pick mutations.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(Next() % n); }

 private:
  uint64_t state_;
};

// Tokens that push parsers into their edge cases.
constexpr std::string_view kTokens[] = {":",
                                        ": ",
                                        "\n",
                                        "- ",
                                        "{",
                                        "}",
                                        "[",
                                        "]",
                                        "\"",
                                        "'",
                                        "#",
                                        "&a",
                                        "*a",
                                        "!!str ",
                                        "\t",
                                        "0x",
                                        "-1",
                                        "0",
                                        "4294967296",
                                        "99999999999999999999",
                                        "1e9",
                                        "null",
                                        "~",
                                        "true",
                                        "  ",
                                        "\r\n",
                                        "cu_mask: ",
                                        "pipe_id: 19",
                                        "mem: 1 MiB",
                                        "index: ",
                                        "cards:",
                                        "vhcus:",
                                        "profile: 2c.4g.31gb",
                                        "0000:09:00.0",
                                        "\xff",
                                        std::string_view("\0", 1)};

std::string Mutate(const std::vector<std::string>& seeds, Rng& rng) {
  std::string s = seeds[rng.Below(seeds.size())];
  int rounds = 1 + static_cast<int>(rng.Below(4));
  for (int r = 0; r < rounds; ++r) {
    switch (rng.Below(7)) {
      case 0:  // flip a bit
        if (!s.empty()) s[rng.Below(s.size())] ^= static_cast<char>(1u << rng.Below(8));
        break;
      case 1:  // random byte
        if (!s.empty()) s[rng.Below(s.size())] = static_cast<char>(rng.Below(256));
        break;
      case 2:  // truncate
        s.resize(rng.Below(s.size() + 1));
        break;
      case 3: {  // splice with another seed
        const std::string& other = seeds[rng.Below(seeds.size())];
        s = s.substr(0, rng.Below(s.size() + 1)) + other.substr(rng.Below(other.size() + 1));
        break;
      }
      case 4: {  // insert a token
        std::string_view t = kTokens[rng.Below(std::size(kTokens))];
        s.insert(rng.Below(s.size() + 1), t.data(), t.size());
        break;
      }
      case 5: {  // delete a chunk
        size_t at = rng.Below(s.size() + 1);
        s.erase(at, rng.Below(64));
        break;
      }
      default: {  // duplicate a chunk
        size_t at = rng.Below(s.size() + 1);
        std::string chunk = s.substr(at, rng.Below(128));
        s.insert(rng.Below(s.size() + 1), chunk);
        break;
      }
    }
  }
  return s;
}

void Run(const std::string& input) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

bool ReadInto(const fs::path& path, std::vector<std::string>* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  out->push_back(text.str());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  long mutations = 20000;
  double max_seconds = 60;
  std::vector<std::string> seeds;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.rfind("--mutations=", 0) == 0) {
      mutations = std::atol(argv[i] + 12);
    } else if (arg.rfind("--max_seconds=", 0) == 0) {
      max_seconds = std::atof(argv[i] + 14);
    } else if (fs::is_directory(argv[i])) {
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(argv[i])) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());  // deterministic order
      for (const fs::path& f : files) ReadInto(f, &seeds);
    } else if (!ReadInto(argv[i], &seeds)) {
      std::fprintf(stderr, "cannot read %s\n", argv[i]);
      return 2;
    }
  }
  if (seeds.empty()) {
    std::fprintf(stderr, "no corpus files\n");
    return 2;
  }
  for (const std::string& s : seeds) Run(s);
  Run("");
  auto start = std::chrono::steady_clock::now();
  Rng rng(0x5eed5eed);
  long done = 0;
  for (; done < mutations; ++done) {
    if (done % 256 == 0) {
      std::chrono::duration<double> spent = std::chrono::steady_clock::now() - start;
      if (spent.count() > max_seconds) break;
    }
    Run(Mutate(seeds, rng));
  }
  std::printf("%zu corpus files, %ld mutations: no crash\n", seeds.size(), done);
  return 0;
}
