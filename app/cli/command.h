#pragma once
// Subcommand registry for weir-cli. A subcommand file defines
//   static weir::cli::Command reg{"name", "one-line help", &run};
// and weir-cli dispatches on argv[1].
#include <functional>
#include <string>
#include <vector>

namespace weir::cli {

using CommandFn = int (*)(const std::vector<std::string>& args);  // args after the subcommand

struct Command {
    Command(const char* name, const char* help, CommandFn fn);
    const char* name;
    const char* help;
    CommandFn fn;
};

const std::vector<const Command*>& commands();

// Small argument helpers shared by subcommands.
class Args {
public:
    explicit Args(const std::vector<std::string>& args) : args_(args) {}
    bool flag(const std::string& name);                                  // --json
    std::string value(const std::string& name, const std::string& def);  // -p TEXT / --prompt=TEXT
    // A number given for `name` must parse completely and lie in [lo, hi];
    // otherwise weir::Error names the option, the range and what was given.
    long long intValue(const std::string& name, long long def, long long lo, long long hi);
    double floatValue(const std::string& name, double def, double lo, double hi);  // finite only
    // Whatever was not consumed; an unknown option is an error naming it.
    std::vector<std::string> rest() const;
    void rejectUnknown() const;  // throws weir::Error naming the first unconsumed option
private:
    std::vector<std::string> args_;
    std::vector<bool> used_ = std::vector<bool>(args_.size(), false);
};

// The model weir-cli uses when no -m is given.
std::string defaultModelPath();

} // namespace weir::cli
