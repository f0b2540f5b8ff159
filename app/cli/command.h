#pragma once
// Subcommand registry for weir-cli. A subcommand file defines
//   static weir::cli::Command reg{"name", "one-line help", &run};
// (optionally with a fourth argument: usage lines shown by --help) and
// weir-cli dispatches on argv[1]. `weir-cli NAME --help` (or -h, or
// `weir-cli help NAME`) prints the command's help and exits 0 without
// running it.
#include <functional>
#include <string>
#include <vector>

namespace weir::cli {

using CommandFn = int (*)(const std::vector<std::string>& args);  // args after the subcommand

struct Command {
    Command(const char* name, const char* help, CommandFn fn, const char* usage = nullptr);
    const char* name;
    const char* help;
    CommandFn fn;
    const char* usage;  // extra lines for --help, or nullptr
};

const std::vector<const Command*>& commands();

// Small argument helpers shared by subcommands.
class Args {
public:
    explicit Args(const std::vector<std::string>& args) : args_(args) {}
    // An option given twice is a weir::Error naming it (the second would be
    // ignored otherwise); values(), for options that may repeat, takes all.
    bool flag(const std::string& name);                                  // --json
    std::string value(const std::string& name, const std::string& def);  // -p TEXT / --prompt=TEXT
    std::vector<std::string> values(const std::string& name);            // every -x V, in order
    // A number given for `name` must parse completely and lie in [lo, hi];
    // otherwise weir::Error names the option, the range and what was given.
    long long intValue(const std::string& name, long long def, long long lo, long long hi);
    double floatValue(const std::string& name, double def, double lo, double hi);  // finite only
    // Whatever was not consumed; an unknown option is an error naming it.
    std::vector<std::string> rest() const;
    void rejectUnknown() const;  // throws weir::Error naming the first unconsumed option
private:
    std::string take(size_t i, const std::string& name);  // the value of the option at i
    void rejectRepeat(size_t first, const std::string& name) const;
    std::vector<std::string> args_;
    std::vector<bool> used_ = std::vector<bool>(args_.size(), false);
};

// The model weir-cli uses when no -m is given: $WEIR_MODEL, else the default
// model in $XDG_DATA_HOME/weir/models or the build folder's models/
// (app/locations/model_locations.h).
std::string defaultModelPath();

} // namespace weir::cli
