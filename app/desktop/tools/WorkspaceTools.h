#pragma once
// The workspace file tools, all confined to one WorkspaceFolder:
// list_files, read_file, search_files (read only) and write_file (asked
// about on every run). Outputs are capped so a big file cannot flood the
// context.
#include <memory>

#include "tools/Tool.h"
#include "tools/WorkspaceFolder.h"

namespace weir::desktop {

constexpr qsizetype kWorkspaceReadLimit = 32 * 1024;  // characters handed back

class WorkspaceTool : public Tool {
public:
    explicit WorkspaceTool(std::shared_ptr<const WorkspaceFolder> folder) : folder_(std::move(folder)) {}

protected:
    std::shared_ptr<const WorkspaceFolder> folder_;
};

class ListFilesTool final : public WorkspaceTool {
public:
    using WorkspaceTool::WorkspaceTool;
    QString name() const override { return QStringLiteral("list_files"); }
    QString description() const override;
    QByteArray parametersJson() const override;
    ToolResult run(const QJsonObject& arguments) const override;
};

class ReadFileTool final : public WorkspaceTool {
public:
    using WorkspaceTool::WorkspaceTool;
    QString name() const override { return QStringLiteral("read_file"); }
    QString description() const override;
    QByteArray parametersJson() const override;
    ToolResult run(const QJsonObject& arguments) const override;
};

class SearchFilesTool final : public WorkspaceTool {
public:
    using WorkspaceTool::WorkspaceTool;
    QString name() const override { return QStringLiteral("search_files"); }
    QString description() const override;
    QByteArray parametersJson() const override;
    ToolResult run(const QJsonObject& arguments) const override;
};

class WriteFileTool final : public WorkspaceTool {
public:
    using WorkspaceTool::WorkspaceTool;
    QString name() const override { return QStringLiteral("write_file"); }
    QString description() const override;
    QByteArray parametersJson() const override;
    bool alwaysAsks() const override { return true; }
    ToolResult run(const QJsonObject& arguments) const override;
};

} // namespace weir::desktop
