#pragma once
// Runs a program (weir-cli, python) to the end for the plain tests, with
// its stdout and stderr captured: posix_spawn, no shell, so arguments need
// no quoting.
#include <string>
#include <vector>

namespace weirtest {

struct ProcessResult {
    bool started = false;   // false: the program could not be run at all
    bool exited = false;    // ended by exit(), not by a signal
    int exitCode = -1;      // valid when exited
    int signal = 0;         // the signal that ended it, when !exited
    std::string out, err;
    std::string startError; // why it did not start
};

// Runs program with args (argv[1..]), stdin from /dev/null, until it ends.
ProcessResult runProcess(const std::string& program, const std::vector<std::string>& args);

// True when path names an executable file.
bool isExecutable(const std::string& path);

} // namespace weirtest
