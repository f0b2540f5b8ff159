#pragma once
// run_shell: one shell command (/bin/sh -c) in the workspace folder (or the
// home folder). Off unless the user switches it on; asked about on every run;
// killed after a timeout; its output (stdout and stderr together) is capped.
// Runs on a worker thread, so waiting for the process blocks nothing else.
#include <memory>

#include "tools/Tool.h"
#include "tools/WorkspaceFolder.h"

namespace weir::desktop {

class ShellTool final : public Tool {
public:
    explicit ShellTool(std::shared_ptr<const WorkspaceFolder> folder, int timeoutMs = 30000,
                       qsizetype outputLimit = 16 * 1024)
        : folder_(std::move(folder)), timeoutMs_(timeoutMs), outputLimit_(outputLimit) {}
    QString name() const override { return QStringLiteral("run_shell"); }
    QString description() const override;
    QByteArray parametersJson() const override;
    bool alwaysAsks() const override { return true; }
    ToolResult run(const QJsonObject& arguments) const override;

private:
    std::shared_ptr<const WorkspaceFolder> folder_;
    int timeoutMs_;
    qsizetype outputLimit_;
};

} // namespace weir::desktop
