// weir-cli entry point: dispatches to the registered subcommands.
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
#include "weir/base/error.h"

namespace weir::cli {

static std::vector<const Command*>& registry() {
    static std::vector<const Command*> r;
    return r;
}
Command::Command(const char* n, const char* h, CommandFn f) : name(n), help(h), fn(f) {
    registry().push_back(this);
}
const std::vector<const Command*>& commands() { return registry(); }

static bool matches(const std::string& arg, const std::string& name) {
    return arg == name || arg.rfind(name + "=", 0) == 0;
}

bool Args::flag(const std::string& name) {
    for (size_t i = 0; i < args_.size(); ++i)
        if (!used_[i] && args_[i] == name) { used_[i] = true; return true; }
    return false;
}

std::string Args::value(const std::string& name, const std::string& def) {
    for (size_t i = 0; i < args_.size(); ++i) {
        if (used_[i] || !matches(args_[i], name)) continue;
        used_[i] = true;
        if (args_[i].size() > name.size()) return args_[i].substr(name.size() + 1);
        if (i + 1 >= args_.size()) throw Error("option " + name + " needs a value");
        used_[i + 1] = true;
        return args_[i + 1];
    }
    return def;
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

std::string defaultModelPath() {
    if (const char* env = std::getenv("WEIR_MODEL"); env && *env) return env;
    return WEIR_DEFAULT_MODEL;
}

} // namespace weir::cli

static void usage() {
    std::fprintf(stderr, "usage: weir-cli COMMAND [options]\n\ncommands:\n");
    for (const auto* c : weir::cli::commands()) std::fprintf(stderr, "  %-10s %s\n", c->name, c->help);
    std::fprintf(stderr, "\nengine flags (serve, soak, bench-concurrency):\n  %s\n", weir::cli::kEngineFlagsHelp);
}

int main(int argc, char** argv) {
    if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
        usage();
        return argc < 2 ? 2 : 0;
    }
    std::vector<std::string> args(argv + 2, argv + argc);
    for (const auto* c : weir::cli::commands()) {
        if (std::strcmp(c->name, argv[1]) != 0) continue;
        try {
            return c->fn(args);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "weir-cli %s: error: %s\n", argv[1], e.what());
            return 1;
        }
    }
    std::fprintf(stderr, "weir-cli: unknown command '%s'\n", argv[1]);
    usage();
    return 2;
}
