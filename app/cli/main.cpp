// weir-cli entry point: dispatches to the registered subcommands.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "app/cli/command.h"
#include "app/cli/engine_flags.h"
#include "app/locations/model_locations.h"
#include "weir/base/error.h"

namespace weir::cli {

static std::vector<const Command*>& registry() {
    static std::vector<const Command*> r;
    return r;
}
Command::Command(const char* n, const char* h, CommandFn f, const char* u) : name(n), help(h), fn(f), usage(u) {
    registry().push_back(this);
}
const std::vector<const Command*>& commands() { return registry(); }

static bool matches(const std::string& arg, const std::string& name) {
    return arg == name || arg.rfind(name + "=", 0) == 0;
}

void Args::rejectRepeat(size_t first, const std::string& name) const {
    for (size_t i = first + 1; i < args_.size(); ++i)
        if (!used_[i] && matches(args_[i], name))
            throw Error("option " + name + " is given more than once");
}

bool Args::flag(const std::string& name) {
    for (size_t i = 0; i < args_.size(); ++i)
        if (!used_[i] && args_[i] == name) {
            used_[i] = true;
            rejectRepeat(i, name);
            return true;
        }
    return false;
}

std::string Args::take(size_t i, const std::string& name) {
    used_[i] = true;
    if (args_[i].size() > name.size()) return args_[i].substr(name.size() + 1);
    if (i + 1 >= args_.size()) throw Error("option " + name + " needs a value");
    used_[i + 1] = true;
    return args_[i + 1];
}

std::string Args::value(const std::string& name, const std::string& def) {
    for (size_t i = 0; i < args_.size(); ++i) {
        if (used_[i] || !matches(args_[i], name)) continue;
        std::string v = take(i, name);
        rejectRepeat(i, name);
        return v;
    }
    return def;
}

std::vector<std::string> Args::values(const std::string& name) {
    std::vector<std::string> out;
    for (size_t i = 0; i < args_.size(); ++i)
        if (!used_[i] && matches(args_[i], name)) out.push_back(take(i, name));
    return out;
}

static const std::string kNotGiven = "\x01";  // no option can carry this value

long long Args::intValue(const std::string& name, long long def, long long lo, long long hi) {
    const std::string v = value(name, kNotGiven);
    if (v == kNotGiven) return def;
    const std::string range = " from " + std::to_string(lo) + " to " + std::to_string(hi);
    char* end = nullptr;
    errno = 0;
    const long long r = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end || end == v.c_str())
        throw Error("option " + name + " expects a whole number" + range + ", got '" + v + "'");
    // strtoll saturates on overflow; the range check below must see the real value.
    if (errno == ERANGE || r < lo || r > hi) throw Error("option " + name + " must be" + range + " (got " + v + ")");
    return r;
}

double Args::floatValue(const std::string& name, double def, double lo, double hi) {
    const std::string v = value(name, kNotGiven);
    if (v == kNotGiven) return def;
    auto number = [](double d) {
        std::ostringstream s;
        s << d;
        return s.str();
    };
    const std::string range = " from " + number(lo) + " to " + number(hi);
    char* end = nullptr;
    const double r = std::strtod(v.c_str(), &end);
    if (v.empty() || *end || end == v.c_str())
        throw Error("option " + name + " expects a number" + range + ", got '" + v + "'");
    // !(r >= lo) also refuses NaN.
    if (!std::isfinite(r) || !(r >= lo) || !(r <= hi)) throw Error("option " + name + " must be" + range + " (got " + v + ")");
    return r;
}

std::vector<std::string> Args::rest() const {
    std::vector<std::string> r;
    for (size_t i = 0; i < args_.size(); ++i) if (!used_[i]) r.push_back(args_[i]);
    return r;
}

void Args::rejectUnknown() const {
    for (size_t i = 0; i < args_.size(); ++i)
        if (!used_[i]) throw Error("unknown argument '" + args_[i] + "'");
}

std::string defaultModelPath() { return locations::defaultModelPath(); }

} // namespace weir::cli

// Prints `text` wrapped at 78 columns, each line indented by two spaces.
static void printWrapped(std::FILE* out, const std::string& text) {
    std::istringstream words(text);
    std::string word, line;
    while (words >> word) {
        if (!line.empty() && line.size() + 1 + word.size() > 76) {
            std::fprintf(out, "  %s\n", line.c_str());
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
    }
    if (!line.empty()) std::fprintf(out, "  %s\n", line.c_str());
}

static void usage(std::FILE* out) {
    std::fprintf(out, "usage: weir-cli COMMAND [options]\n       weir-cli COMMAND --help\n\ncommands:\n");
    for (const auto* c : weir::cli::commands()) {
        // The summary: the help up to its list of options.
        const std::string help = c->help;
        std::fprintf(out, "  %-17s %s\n", c->name, help.substr(0, help.find(": ")).c_str());
    }
    std::fprintf(out, "\nengine flags (%s):\n", weir::cli::kEngineFlagsCommands);
    printWrapped(out, weir::cli::kEngineFlagsHelp);
    std::fprintf(out, "\nmodels are looked for in:\n");
    for (const auto& dir : weir::locations::modelSearchDirs()) std::fprintf(out, "  %s\n", dir.c_str());
    std::fprintf(out, "without -m: %s ($WEIR_MODEL overrides)\n", weir::cli::defaultModelPath().c_str());
}

static void commandHelp(const weir::cli::Command& c) {
    std::printf("usage: weir-cli %s [options]\n\n", c.name);
    printWrapped(stdout, c.help);
    if (c.usage) std::printf("\n%s\n", c.usage);
    if (weir::cli::takesEngineFlags(c.name)) {
        std::printf("\nengine flags:\n");
        printWrapped(stdout, weir::cli::kEngineFlagsHelp);
    }
}

static bool isHelp(const std::string& a) { return a == "--help" || a == "-h"; }

static const weir::cli::Command* findCommand(const std::string& name) {
    for (const auto* c : weir::cli::commands())
        if (name == c->name) return c;
    return nullptr;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const std::string name = argv[1];
    std::vector<std::string> args(argv + 2, argv + argc);
    if (isHelp(name) || (name == "help" && args.empty())) {
        usage(stdout);
        return 0;
    }
    if (name == "help") {
        const auto* c = findCommand(args[0]);
        if (!c) {
            std::fprintf(stderr, "weir-cli: unknown command '%s'\n", args[0].c_str());
            return 2;
        }
        commandHelp(*c);
        return 0;
    }
    const auto* c = findCommand(name);
    if (!c) {
        std::fprintf(stderr, "weir-cli: unknown command '%s'\n", name.c_str());
        usage(stderr);
        return 2;
    }
    // --help anywhere among the options, as most parsers read it.
    if (std::any_of(args.begin(), args.end(), isHelp)) {
        commandHelp(*c);
        return 0;
    }
    try {
        return c->fn(args);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "weir-cli %s: error: %s\n", name.c_str(), e.what());
        return 1;
    }
}
