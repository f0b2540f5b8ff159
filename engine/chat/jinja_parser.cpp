#include "engine/chat/jinja_parser.h"

#include <initializer_list>

#include "engine/chat/jinja_provenance.h"
#include "weir/base/error.h"

namespace weir::jinja {

namespace {

// Nesting of expressions and blocks beyond this is refused (it could only
// come from a hostile template and would otherwise exhaust the stack).
constexpr int kMaxNesting = 200;

class Parser {
public:
    explicit Parser(std::vector<Token> tokens) : toks_(std::move(tokens)) {}

    std::shared_ptr<const Program> run() {
        auto prog = std::make_shared<Program>();
        prog->body = subparse({});
        if (cur().type != TokenType::End) fail(cur().loc, "unexpected '" + describeToken(cur()) + "'");
        return prog;
    }

private:
    std::vector<Token> toks_;
    size_t p_ = 0;
    int depth_ = 0;

    struct DepthGuard {
        Parser& p;
        DepthGuard(Parser& parser, SourceLoc loc) : p(parser) {
            if (++p.depth_ > kMaxNesting) p.fail(loc, "template nested too deeply");
        }
        ~DepthGuard() { --p.depth_; }
    };

    const Token& cur() const { return toks_[p_]; }
    const Token& peek(size_t n = 1) const { return toks_[std::min(p_ + n, toks_.size() - 1)]; }
    void advance() { if (p_ + 1 < toks_.size()) ++p_; }

    [[noreturn]] void fail(const SourceLoc& loc, const std::string& what) const {
        throw Error("chat template: " + describe(loc) + ": " + what);
    }

    static std::string describeToken(const Token& t) {
        switch (t.type) {
            case TokenType::Text: return "text";
            case TokenType::VarBegin: return "{{";
            case TokenType::VarEnd: return "}}";
            case TokenType::BlockBegin: return "{%";
            case TokenType::BlockEnd: return "%}";
            case TokenType::Name: case TokenType::Operator: case TokenType::Integer: case TokenType::Float:
                return t.text;
            case TokenType::String: return "string";
            case TokenType::End: return "end of template";
        }
        return "?";
    }

    bool isOp(const char* op) const { return cur().type == TokenType::Operator && cur().text == op; }
    bool isName(const char* name) const { return cur().type == TokenType::Name && cur().text == name; }
    bool skipOp(const char* op) {
        if (!isOp(op)) return false;
        advance();
        return true;
    }
    bool skipName(const char* name) {
        if (!isName(name)) return false;
        advance();
        return true;
    }
    void expectOp(const char* op) {
        if (!skipOp(op)) fail(cur().loc, std::string("expected '") + op + "', got '" + describeToken(cur()) + "'");
    }
    std::string expectName() {
        if (cur().type != TokenType::Name) fail(cur().loc, "expected a name, got '" + describeToken(cur()) + "'");
        std::string n = cur().text;
        advance();
        return n;
    }
    void expectBlockEnd() {
        if (cur().type != TokenType::BlockEnd)
            fail(cur().loc, "expected end of statement block, got '" + describeToken(cur()) + "'");
        advance();
    }

    // ---------------------------------------------------------------- statements

    // Parses until a block whose first name is one of endNames (left unconsumed:
    // cur() is then that name) or the end of the template.
    Body subparse(std::initializer_list<const char*> endNames) {
        Body body;
        for (;;) {
            const Token& t = cur();
            if (t.type == TokenType::End) return body;
            if (t.type == TokenType::Text) {
                auto s = std::make_unique<Stmt>(StmtKind::Text, t.loc);
                s->text = t.text;
                body.push_back(std::move(s));
                advance();
                continue;
            }
            if (t.type == TokenType::VarBegin) {
                SourceLoc loc = t.loc;
                advance();
                auto s = std::make_unique<Stmt>(StmtKind::Output, loc);
                s->expr = parseTuple(true, {}, false);
                if (cur().type != TokenType::VarEnd)
                    fail(cur().loc, "expected '}}', got '" + describeToken(cur()) + "'");
                advance();
                body.push_back(std::move(s));
                continue;
            }
            if (t.type == TokenType::BlockBegin) {
                const Token& n = peek();
                if (n.type != TokenType::Name) fail(n.loc, "expected a statement name after '{%'");
                for (const char* e : endNames)
                    if (n.text == e) { advance(); return body; }
                advance();
                body.push_back(parseStatement());
                continue;
            }
            fail(t.loc, "unexpected '" + describeToken(t) + "'");
        }
    }

    // After subparse stopped at an end name: requires that name.
    void expectEnd(const char* name, const SourceLoc& openLoc, const char* opener) {
        if (cur().type == TokenType::End)
            fail(openLoc, std::string("'") + opener + "' is never closed (expected '" + name + "')");
        if (!isName(name)) fail(cur().loc, std::string("expected '") + name + "', got '" + cur().text + "'");
        advance();
    }

    StmtPtr parseStatement() {
        const Token& t = cur();
        DepthGuard guard(*this, t.loc);
        const std::string& n = t.text;
        if (n == "if") return parseIf();
        if (n == "for") return parseFor();
        if (n == "set") return parseSet();
        if (n == "macro") return parseMacro();
        if (n == "filter") return parseFilterBlock();
        if (n == "with") return parseWith();
        if (n == "break" || n == "continue") {
            auto s = std::make_unique<Stmt>(n == "break" ? StmtKind::Break : StmtKind::Continue, t.loc);
            advance();
            expectBlockEnd();
            return s;
        }
        if (n == "generation" || n == "autoescape" || n == "block") {
            // Run in place: generation marks assistant text for training masks
            // (HF), blocks only matter with template inheritance, autoescape is off.
            SourceLoc loc = t.loc;
            std::string tag = n;
            advance();
            if (tag == "block") expectName();
            else if (tag == "autoescape") parseExpression(true);
            if (tag == "block") skipName("scoped");
            expectBlockEnd();
            auto s = std::make_unique<Stmt>(StmtKind::Scope, loc);
            std::string endTag = "end" + tag;
            s->body = subparse({endTag.c_str()});
            expectEnd(endTag.c_str(), loc, tag.c_str());
            if (tag == "block" && cur().type == TokenType::Name) advance();  // {% endblock name %}
            expectBlockEnd();
            return s;
        }
        if (n == "extends" || n == "include" || n == "import" || n == "from" || n == "call")
            fail(t.loc, "the '" + n + "' tag is not supported in chat templates");
        fail(t.loc, "encountered unknown tag '" + n + "'");
    }

    StmtPtr parseIf() {
        auto s = std::make_unique<Stmt>(StmtKind::If, cur().loc);
        SourceLoc open = cur().loc;
        advance();  // if
        for (;;) {
            s->conditions.push_back(parseTuple(true, {}, false));
            expectBlockEnd();
            s->bodies.push_back(subparse({"elif", "else", "endif"}));
            if (skipName("elif")) continue;
            if (skipName("else")) {
                expectBlockEnd();
                s->elseBody = subparse({"endif"});
            }
            expectEnd("endif", open, "if");
            expectBlockEnd();
            return s;
        }
    }

    // Names for for-loop and set targets: "a", "a, b", "(a, b)".
    void parseTargets(Stmt& s, bool allowNamespace) {
        bool paren = skipOp("(");
        for (;;) {
            SourceLoc loc = cur().loc;
            std::string name = expectName();
            if (allowNamespace && !paren && s.targets.empty() && isOp(".")) {
                advance();
                s.namespaceTarget = true;
                s.targets.push_back(name);
                s.text = expectName();
                return;
            }
            s.targets.push_back(name);
            (void)loc;
            if (!skipOp(",")) break;
            s.tupleTarget = true;
            if (paren && isOp(")")) break;
            if (!paren && (isName("in") || isOp("=") || cur().type == TokenType::BlockEnd)) break;
        }
        if (paren) {
            expectOp(")");
            s.tupleTarget = true;
        }
    }

    StmtPtr parseFor() {
        auto s = std::make_unique<Stmt>(StmtKind::For, cur().loc);
        SourceLoc open = cur().loc;
        advance();  // for
        parseTargets(*s, false);
        if (!skipName("in")) fail(cur().loc, "expected 'in' in for loop, got '" + describeToken(cur()) + "'");
        s->expr = parseTuple(false, {"recursive"}, false);
        if (skipName("if")) s->filter = parseExpression(true);
        if (isName("recursive")) fail(cur().loc, "recursive for loops are not supported");
        expectBlockEnd();
        s->body = subparse({"endfor", "else"});
        if (skipName("else")) {
            expectBlockEnd();
            s->elseBody = subparse({"endfor"});
        }
        expectEnd("endfor", open, "for");
        expectBlockEnd();
        return s;
    }

    StmtPtr parseSet() {
        SourceLoc open = cur().loc;
        advance();  // set
        auto s = std::make_unique<Stmt>(StmtKind::Set, open);
        parseTargets(*s, true);
        if (skipOp("=")) {
            s->expr = parseTuple(true, {}, false);
            expectBlockEnd();
            return s;
        }
        if (s->namespaceTarget || s->tupleTarget) fail(cur().loc, "a block set takes a single name");
        s->kind = StmtKind::SetBlock;
        if (isOp("|")) s->filter = parseFilterChain(nullptr);
        expectBlockEnd();
        s->body = subparse({"endset"});
        expectEnd("endset", open, "set");
        expectBlockEnd();
        return s;
    }

    StmtPtr parseMacro() {
        SourceLoc open = cur().loc;
        advance();  // macro
        auto s = std::make_unique<Stmt>(StmtKind::Macro, open);
        s->text = expectName();
        expectOp("(");
        while (!isOp(")")) {
            if (!s->params.empty()) expectOp(",");
            if (isOp(")")) break;
            MacroParam param;
            param.name = expectName();
            if (skipOp("=")) param.defaultValue = parseExpression(true);
            else if (!s->params.empty() && s->params.back().defaultValue)
                fail(cur().loc, "non-default argument follows default argument");
            s->params.push_back(std::move(param));
        }
        expectOp(")");
        expectBlockEnd();
        s->body = subparse({"endmacro"});
        expectEnd("endmacro", open, "macro");
        if (cur().type == TokenType::Name) advance();  // {% endmacro name %}
        expectBlockEnd();
        return s;
    }

    StmtPtr parseFilterBlock() {
        SourceLoc open = cur().loc;
        advance();  // filter
        auto s = std::make_unique<Stmt>(StmtKind::FilterBlock, open);
        s->filter = parseFilterChain(nullptr, /*leadingPipe=*/false);
        expectBlockEnd();
        s->body = subparse({"endfilter"});
        expectEnd("endfilter", open, "filter");
        expectBlockEnd();
        return s;
    }

    StmtPtr parseWith() {
        SourceLoc open = cur().loc;
        advance();  // with
        auto s = std::make_unique<Stmt>(StmtKind::With, open);
        while (cur().type != TokenType::BlockEnd) {
            if (!s->targets.empty()) expectOp(",");
            s->targets.push_back(expectName());
            expectOp("=");
            s->values.push_back(parseExpression(true));
        }
        expectBlockEnd();
        s->body = subparse({"endwith"});
        expectEnd("endwith", open, "with");
        expectBlockEnd();
        return s;
    }

    // ---------------------------------------------------------------- expressions

    ExprPtr make(ExprKind k, SourceLoc loc) { return std::make_unique<Expr>(k, loc); }

    bool isTupleEnd(std::initializer_list<const char*> extraEnd) const {
        const Token& t = cur();
        if (t.type == TokenType::VarEnd || t.type == TokenType::BlockEnd || t.type == TokenType::End) return true;
        if (t.type == TokenType::Operator && t.text == ")") return true;
        for (const char* e : extraEnd)
            if (t.type == TokenType::Name && t.text == e) return true;
        return false;
    }

    ExprPtr parseTuple(bool withCondExpr, std::initializer_list<const char*> extraEnd, bool explicitParens) {
        SourceLoc loc = cur().loc;
        std::vector<ExprPtr> args;
        bool isTuple = false;
        for (;;) {
            if (!args.empty()) expectOp(",");
            if (isTupleEnd(extraEnd)) break;
            args.push_back(parseExpression(withCondExpr));
            if (isOp(",")) isTuple = true;
            else break;
        }
        if (!isTuple) {
            if (!args.empty()) return std::move(args[0]);
            if (!explicitParens) fail(cur().loc, "expected an expression, got '" + describeToken(cur()) + "'");
        }
        auto e = make(ExprKind::Tuple, loc);
        e->items = std::move(args);
        return e;
    }

    ExprPtr parseExpression(bool withCondExpr) {
        DepthGuard guard(*this, cur().loc);
        return withCondExpr ? parseCondExpr() : parseOr();
    }

    ExprPtr parseCondExpr() {
        ExprPtr e = parseOr();
        while (isName("if")) {
            SourceLoc loc = cur().loc;
            advance();
            auto c = make(ExprKind::Cond, loc);
            c->a = parseOr();  // condition
            c->b = std::move(e);  // value when true
            if (skipName("else")) c->c = parseCondExpr();
            e = std::move(c);
        }
        return e;
    }

    ExprPtr parseOr() {
        ExprPtr e = parseAnd();
        while (isName("or")) {
            auto n = make(ExprKind::Or, cur().loc);
            advance();
            n->a = std::move(e);
            n->b = parseAnd();
            e = std::move(n);
        }
        return e;
    }

    ExprPtr parseAnd() {
        ExprPtr e = parseNot();
        while (isName("and")) {
            auto n = make(ExprKind::And, cur().loc);
            advance();
            n->a = std::move(e);
            n->b = parseNot();
            e = std::move(n);
        }
        return e;
    }

    ExprPtr parseNot() {
        if (isName("not")) {
            DepthGuard guard(*this, cur().loc);
            auto n = make(ExprKind::Not, cur().loc);
            advance();
            n->a = parseNot();
            return n;
        }
        return parseCompare();
    }

    ExprPtr parseCompare() {
        SourceLoc loc = cur().loc;
        ExprPtr e = parseMath1();
        ExprPtr cmp;
        for (;;) {
            std::string op;
            if (cur().type == TokenType::Operator &&
                (cur().text == "==" || cur().text == "!=" || cur().text == "<" || cur().text == "<=" ||
                 cur().text == ">" || cur().text == ">=")) {
                op = cur().text;
                advance();
            } else if (isName("in")) {
                op = "in";
                advance();
            } else if (isName("not") && peek().type == TokenType::Name && peek().text == "in") {
                op = "notin";
                advance();
                advance();
            } else {
                break;
            }
            if (!cmp) {
                cmp = make(ExprKind::Compare, loc);
                cmp->a = std::move(e);
            }
            cmp->compareOps.push_back(op);
            cmp->items.push_back(parseMath1());
        }
        return cmp ? std::move(cmp) : std::move(e);
    }

    ExprPtr binary(const std::string& op, ExprPtr l, ExprPtr r, SourceLoc loc) {
        auto n = make(ExprKind::Binary, loc);
        n->name = op;
        n->a = std::move(l);
        n->b = std::move(r);
        return n;
    }

    ExprPtr parseMath1() {
        ExprPtr e = parseConcat();
        while (isOp("+") || isOp("-")) {
            std::string op = cur().text;
            SourceLoc loc = cur().loc;
            advance();
            e = binary(op, std::move(e), parseConcat(), loc);
        }
        return e;
    }

    ExprPtr parseConcat() {
        ExprPtr e = parseMath2();
        while (isOp("~")) {
            SourceLoc loc = cur().loc;
            advance();
            e = binary("~", std::move(e), parseMath2(), loc);
        }
        return e;
    }

    ExprPtr parseMath2() {
        ExprPtr e = parsePow();
        while (isOp("*") || isOp("/") || isOp("//") || isOp("%")) {
            std::string op = cur().text;
            SourceLoc loc = cur().loc;
            advance();
            e = binary(op, std::move(e), parsePow(), loc);
        }
        return e;
    }

    ExprPtr parsePow() {
        ExprPtr e = parseUnary(true);
        while (isOp("**")) {
            SourceLoc loc = cur().loc;
            advance();
            e = binary("**", std::move(e), parseUnary(true), loc);
        }
        return e;
    }

    ExprPtr parseUnary(bool withFilter) {
        DepthGuard guard(*this, cur().loc);
        ExprPtr node;
        if (isOp("-") || isOp("+")) {
            auto n = make(isOp("-") ? ExprKind::Negate : ExprKind::Plus, cur().loc);
            advance();
            n->a = parseUnary(false);
            node = std::move(n);
        } else {
            node = parsePrimary();
        }
        node = parsePostfix(std::move(node));
        if (withFilter) node = parseFilterExpr(std::move(node));
        return node;
    }

    ExprPtr parsePrimary() {
        const Token& t = cur();
        SourceLoc loc = t.loc;
        switch (t.type) {
            case TokenType::Name: {
                auto e = make(ExprKind::Literal, loc);
                const std::string& n = t.text;
                if (n == "true" || n == "True") e->value = Value(true);
                else if (n == "false" || n == "False") e->value = Value(false);
                else if (n == "none" || n == "None") e->value = Value::none();
                else {
                    e->kind = ExprKind::Name;
                    e->name = n;
                }
                advance();
                return e;
            }
            case TokenType::String: {
                std::string s;
                while (cur().type == TokenType::String) {  // adjacent literals concatenate
                    s += cur().text;
                    advance();
                }
                auto e = make(ExprKind::Literal, loc);
                e->value = trustedText(std::move(s));  // the template's own text
                return e;
            }
            case TokenType::Integer: {
                auto e = make(ExprKind::Literal, loc);
                e->value = Value(t.intValue);
                advance();
                return e;
            }
            case TokenType::Float: {
                auto e = make(ExprKind::Literal, loc);
                e->value = Value(t.floatValue);
                advance();
                return e;
            }
            case TokenType::Operator:
                if (t.text == "(") {
                    advance();
                    ExprPtr e = parseTuple(true, {}, true);
                    expectOp(")");
                    return e;
                }
                if (t.text == "[") {
                    advance();
                    auto e = make(ExprKind::List, loc);
                    while (!isOp("]")) {
                        if (!e->items.empty()) expectOp(",");
                        if (isOp("]")) break;
                        e->items.push_back(parseExpression(true));
                    }
                    expectOp("]");
                    return e;
                }
                if (t.text == "{") {
                    advance();
                    auto e = make(ExprKind::Dict, loc);
                    while (!isOp("}")) {
                        if (!e->items.empty()) expectOp(",");
                        if (isOp("}")) break;
                        e->items.push_back(parseExpression(true));
                        expectOp(":");
                        e->items.push_back(parseExpression(true));
                    }
                    expectOp("}");
                    return e;
                }
                break;
            default: break;
        }
        fail(loc, "unexpected '" + describeToken(t) + "'");
    }

    ExprPtr parsePostfix(ExprPtr node) {
        for (;;) {
            if (isOp(".")) {
                SourceLoc loc = cur().loc;
                advance();
                if (cur().type == TokenType::Name) {
                    auto e = make(ExprKind::Attr, loc);
                    e->a = std::move(node);
                    e->name = cur().text;
                    advance();
                    node = std::move(e);
                } else if (cur().type == TokenType::Integer) {
                    auto e = make(ExprKind::Item, loc);
                    e->a = std::move(node);
                    e->b = make(ExprKind::Literal, cur().loc);
                    e->b->value = Value(cur().intValue);
                    advance();
                    node = std::move(e);
                } else {
                    fail(cur().loc, "expected an attribute name after '.'");
                }
            } else if (isOp("[")) {
                node = parseSubscript(std::move(node));
            } else if (isOp("(")) {
                node = parseCall(std::move(node));
            } else {
                return node;
            }
        }
    }

    ExprPtr parseSubscript(ExprPtr node) {
        SourceLoc loc = cur().loc;
        advance();  // [
        std::vector<ExprPtr> parts;
        bool anySlice = false;
        ExprPtr result;
        for (;;) {
            if (!parts.empty()) expectOp(",");
            if (isOp("]")) break;
            // One subscript: an expression or a slice a:b:c.
            ExprPtr start, stop, step;
            bool slice = false;
            if (!isOp(":")) start = parseExpression(true);
            if (skipOp(":")) {
                slice = true;
                if (!isOp("]") && !isOp(",") && !isOp(":")) stop = parseExpression(true);
                if (skipOp(":")) {
                    if (!isOp("]") && !isOp(",")) step = parseExpression(true);
                }
            }
            if (slice) {
                anySlice = true;
                auto s = make(ExprKind::Slice, loc);
                s->a = std::move(start);
                s->b = std::move(stop);
                s->c = std::move(step);
                parts.push_back(std::move(s));
            } else {
                parts.push_back(std::move(start));
            }
            if (!isOp(",")) break;
        }
        expectOp("]");
        if (parts.empty()) fail(loc, "expected a subscript");
        if (parts.size() > 1 || anySlice) {
            if (parts.size() == 1 && parts[0]->kind == ExprKind::Slice) {
                ExprPtr s = std::move(parts[0]);
                // Slice node: subject in items[0]
                s->items.push_back(std::move(node));
                return s;
            }
            fail(loc, "tuple subscripts are not supported");
        }
        auto e = make(ExprKind::Item, loc);
        e->a = std::move(node);
        e->b = std::move(parts[0]);
        return e;
    }

    void parseCallArgs(Expr& e) {
        expectOp("(");
        bool any = false;
        while (!isOp(")")) {
            if (any) expectOp(",");
            if (isOp(")")) break;
            any = true;
            if (isOp("*") || isOp("**")) fail(cur().loc, "*args and **kwargs in calls are not supported");
            if (cur().type == TokenType::Name && peek().type == TokenType::Operator && peek().text == "=") {
                std::string key = cur().text;
                advance();
                advance();
                e.kwargs.emplace_back(key, parseExpression(true));
            } else {
                if (!e.kwargs.empty()) fail(cur().loc, "positional argument follows keyword argument");
                e.items.push_back(parseExpression(true));
            }
        }
        expectOp(")");
    }

    ExprPtr parseCall(ExprPtr node) {
        auto e = make(ExprKind::Call, cur().loc);
        e->a = std::move(node);
        parseCallArgs(*e);
        return e;
    }

    // One or more "| name(args)" applied to subject (null for {% filter %}).
    ExprPtr parseFilterChain(ExprPtr subject, bool leadingPipe = true) {
        bool first = true;
        while (first ? (leadingPipe ? isOp("|") : true) : isOp("|")) {
            if (!first || leadingPipe) advance();  // |
            first = false;
            auto f = make(ExprKind::Filter, cur().loc);
            f->name = expectName();
            while (isOp(".")) {
                advance();
                f->name += "." + expectName();
            }
            f->a = std::move(subject);
            if (isOp("(")) parseCallArgs(*f);
            subject = std::move(f);
        }
        return subject;
    }

    ExprPtr parseFilterExpr(ExprPtr node) {
        for (;;) {
            if (isOp("|")) {
                node = parseFilterChain(std::move(node));
            } else if (isName("is")) {
                node = parseTest(std::move(node));
            } else if (isOp("(")) {
                node = parseCall(std::move(node));
            } else {
                return node;
            }
        }
    }

    ExprPtr parseTest(ExprPtr node) {
        auto t = make(ExprKind::Test, cur().loc);
        advance();  // is
        if (skipName("not")) t->negated = true;
        t->name = expectName();
        while (isOp(".")) {
            advance();
            t->name += "." + expectName();
        }
        t->a = std::move(node);
        const Token& c = cur();
        if (isOp("(")) {
            parseCallArgs(*t);
        } else if ((c.type == TokenType::Name || c.type == TokenType::String || c.type == TokenType::Integer ||
                    c.type == TokenType::Float || (c.type == TokenType::Operator && (c.text == "[" || c.text == "{"))) &&
                   !(c.type == TokenType::Name && (c.text == "else" || c.text == "or" || c.text == "and"))) {
            if (isName("is")) fail(c.loc, "you cannot chain multiple tests with is");
            t->items.push_back(parsePostfix(parsePrimary()));
        }
        return t;
    }
};

}  // namespace

std::shared_ptr<const Program> parseTemplate(std::string_view source) { return Parser(tokenize(source)).run(); }

}  // namespace weir::jinja
