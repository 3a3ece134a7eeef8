// hcuctl version.
#include "command.h"
#include "hcudp/version.h"

namespace hcuctl {
namespace {

int RunVersion(Context& ctx, const std::vector<std::string>& args) {
  hcudp::FlagSet flags("hcuctl version", std::string(kVersionCommand.summary));
  int code = kExitOk;
  auto rest = ParseCommandArgs(ctx, kVersionCommand, flags, args, &code);
  if (!rest) return code;
  if (!rest->empty()) {
    return UsageError(ctx, kVersionCommand, "unexpected argument \"" + rest->front() + "\"");
  }
  Report r;
  r.value = Value::MakeObject().Set("version", hcudp::Version());
  r.notes.push_back(std::string("hcuctl ") + hcudp::Version());
  ctx.Print(r);
  return kExitOk;
}

}  // namespace

const Command kVersionCommand = {"version", "print the version", "hcuctl version", RunVersion};

}  // namespace hcuctl
