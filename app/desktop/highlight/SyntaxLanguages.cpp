#include "highlight/SyntaxLanguages.h"

#include <QHash>

namespace weir::desktop {
namespace {

QSet<QString> words(const char* list) {
    QSet<QString> out;
    for (const QString& w : QString::fromLatin1(list).split(u' ', Qt::SkipEmptyParts)) out.insert(w);
    return out;
}

SyntaxLanguage cppLanguage() {
    SyntaxLanguage cpp;
    cpp.id = QStringLiteral("cpp");
    cpp.displayName = QStringLiteral("C++");
    cpp.lineComments = {QStringLiteral("//")};
    cpp.blockCommentStart = QStringLiteral("/*");
    cpp.blockCommentEnd = QStringLiteral("*/");
    cpp.stringQuotes = QStringLiteral("\"'");
    cpp.preprocessor = true;
    cpp.keywords = words(
        "alignas alignof asm auto break case catch class concept const consteval constexpr constinit const_cast "
        "continue co_await co_return co_yield decltype default delete do dynamic_cast else enum explicit export "
        "extern for friend goto if inline mutable namespace new noexcept operator private protected public "
        "register reinterpret_cast requires return sizeof static static_assert static_cast struct switch "
        "template this thread_local throw try typedef typeid typename union using virtual volatile while "
        "override final");
    cpp.types = words(
        "bool char char8_t char16_t char32_t double float int long short signed unsigned void wchar_t size_t "
        "ssize_t ptrdiff_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t intptr_t uintptr_t "
        "std string vector map unordered_map set unique_ptr shared_ptr optional span string_view array");
    cpp.constants = words("true false nullptr NULL");
    return cpp;
}

SyntaxLanguage pythonLanguage() {
    SyntaxLanguage py;
    py.id = QStringLiteral("python");
    py.displayName = QStringLiteral("Python");
    py.lineComments = {QStringLiteral("#")};
    py.stringQuotes = QStringLiteral("\"'");
    py.tripleQuotes = true;
    py.keywords = words(
        "and as assert async await break class continue def del elif else except finally for from global if "
        "import in is lambda nonlocal not or pass raise return try while with yield match case");
    py.types = words("int float str bytes bool list dict set tuple object type complex frozenset bytearray");
    py.constants = words("True False None self cls print len range enumerate zip open super isinstance");
    return py;
}

SyntaxLanguage javaScriptLanguage() {
    SyntaxLanguage js;
    js.id = QStringLiteral("js");
    js.displayName = QStringLiteral("JavaScript");
    js.lineComments = {QStringLiteral("//")};
    js.blockCommentStart = QStringLiteral("/*");
    js.blockCommentEnd = QStringLiteral("*/");
    js.stringQuotes = QStringLiteral("\"'");
    js.templateStrings = true;
    js.keywords = words(
        "async await break case catch class const continue debugger default delete do else export extends "
        "finally for from function if import in instanceof let new of return static super switch this throw "
        "try typeof var void while with yield as implements interface enum declare readonly abstract "
        "private protected public type namespace keyof satisfies");
    js.types = words(
        "string number boolean any unknown never object symbol bigint Array Map Set Promise Record Partial "
        "Object String Number Boolean Date RegExp Error JSON Math");
    js.constants = words("true false null undefined NaN Infinity console window document globalThis");
    return js;
}

SyntaxLanguage jsonLanguage() {
    SyntaxLanguage json;
    json.id = QStringLiteral("json");
    json.displayName = QStringLiteral("JSON");
    json.stringQuotes = QStringLiteral("\"");
    json.jsonKeys = true;
    json.constants = words("true false null");
    return json;
}

SyntaxLanguage bashLanguage() {
    SyntaxLanguage sh;
    sh.id = QStringLiteral("bash");
    sh.displayName = QStringLiteral("Bash");
    sh.lineComments = {QStringLiteral("#")};
    sh.stringQuotes = QStringLiteral("\"'");
    sh.shellVariables = true;
    sh.keywords = words(
        "if then else elif fi for while until do done case esac in function select return exit break continue "
        "local export readonly declare set unset shift source trap eval exec");
    sh.constants = words(
        "echo printf cd pwd ls cat grep sed awk find xargs mkdir rm cp mv chmod chown test read curl wget git "
        "sudo apt apt-get pip python3 cmake make ninja tar");
    return sh;
}

SyntaxLanguage markdownLanguage() {
    SyntaxLanguage md;
    md.id = QStringLiteral("markdown");
    md.displayName = QStringLiteral("Markdown");
    md.markdown = true;
    return md;
}

QList<SyntaxLanguage> buildLanguages() {
    return {cppLanguage(), pythonLanguage(), javaScriptLanguage(), jsonLanguage(), bashLanguage(), markdownLanguage()};
}

const QHash<QString, QString>& aliases() {
    static const QHash<QString, QString> map{
        {"c", "cpp"}, {"h", "cpp"}, {"cpp", "cpp"}, {"c++", "cpp"}, {"cc", "cpp"}, {"cxx", "cpp"},
        {"hpp", "cpp"}, {"hxx", "cpp"}, {"cuda", "cpp"}, {"cu", "cpp"}, {"objc", "cpp"},
        {"python", "python"}, {"py", "python"}, {"python3", "python"}, {"py3", "python"},
        {"js", "js"}, {"javascript", "js"}, {"jsx", "js"}, {"mjs", "js"}, {"cjs", "js"}, {"node", "js"},
        {"ts", "js"}, {"typescript", "js"}, {"tsx", "js"}, {"qml", "js"},
        {"json", "json"}, {"jsonc", "json"}, {"json5", "json"},
        {"bash", "bash"}, {"sh", "bash"}, {"shell", "bash"}, {"zsh", "bash"}, {"console", "bash"},
        {"shellscript", "bash"},
        {"markdown", "markdown"}, {"md", "markdown"},
    };
    return map;
}

} // namespace

const SyntaxLanguage* findSyntaxLanguage(const QString& fenceName) {
    static const QList<SyntaxLanguage> languages = buildLanguages();
    const QString id = aliases().value(fenceName.trimmed().toLower());
    for (const SyntaxLanguage& l : languages)
        if (l.id == id) return &l;
    return nullptr;
}

QString languageDisplayName(const QString& fenceName) {
    static const QHash<QString, QString> names{
        {"c", "C"}, {"h", "C"}, {"ts", "TypeScript"}, {"typescript", "TypeScript"}, {"tsx", "TSX"},
        {"jsx", "JSX"}, {"sh", "Shell"}, {"zsh", "Zsh"}, {"console", "Console"}, {"cuda", "CUDA"},
        {"cu", "CUDA"}, {"qml", "QML"}, {"rust", "Rust"}, {"go", "Go"}, {"java", "Java"}, {"html", "HTML"},
        {"css", "CSS"}, {"sql", "SQL"}, {"yaml", "YAML"}, {"yml", "YAML"}, {"toml", "TOML"}, {"xml", "XML"},
        {"cmake", "CMake"}, {"diff", "Diff"}, {"text", "Text"}, {"txt", "Text"}, {"ruby", "Ruby"},
        {"kotlin", "Kotlin"}, {"swift", "Swift"}, {"php", "PHP"}, {"lua", "Lua"}, {"r", "R"},
    };
    const QString key = fenceName.trimmed().toLower();
    if (key.isEmpty()) return QStringLiteral("Code");
    if (names.contains(key)) return names.value(key);
    if (const SyntaxLanguage* l = findSyntaxLanguage(key)) return l->displayName;
    return fenceName.trimmed();
}

} // namespace weir::desktop
