// Renders every case of tests/data/templates/expected.json (written by
// tests/reference/make_template_reference.py with python jinja2) and requires
// byte-identical output, or an error where jinja2 failed.
#include "tests/support/text_match.h"
#include "tests/support/weir_test.h"

#include <chrono>

#include <fstream>
#include <sstream>

#include "engine/chat/chat_template.h"
#include "engine/chat/jinja_template.h"

using weir::jinja::Value;

namespace {

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string dataDir() { return weirtest::environment("WEIR_TEST_DATA") + "/templates/"; }

const Value& expected() {
    static const Value data = Value::parseJson(readFile(dataDir() + "expected.json"));
    return data;
}

// Rendered text as a std::string, so both sides of a comparison print as text.
std::string bytes(std::string s) { return s; }

// The real template text, or Weir's built-in one for "builtin-<family>".
std::unique_ptr<weir::ChatTemplate> makeTemplate(const std::string& templateName, const std::string& bos,
                                                 const std::string& eos) {
    const std::string prefix = "builtin-";
    if (templateName.rfind(prefix, 0) == 0) return weir::ChatTemplate::builtin(templateName.substr(prefix.size()), bos, eos);
    return weir::ChatTemplate::create(readFile(dataDir() + templateName), bos, eos);
}

// Messages whose keys start with role, content (a string): these can also go
// through the ChatMessage API with the other keys as extra fields.
bool asChatMessages(const Value& messages, std::vector<weir::ChatMessage>& out) {
    for (const auto& m : messages.asList()) {
        const auto& entries = m.asDict().entries;
        if (entries.size() < 2 || entries[0].first != "role" || entries[1].first != "content" ||
            !entries[0].second.isString() || !entries[1].second.isString())
            return false;
        weir::ChatMessage msg{entries[0].second.asString(), entries[1].second.asString(), Value()};
        if (entries.size() > 2) {
            msg.fields = Value::dict();
            for (size_t i = 2; i < entries.size(); ++i) msg.fields.set(entries[i].first, entries[i].second);
        }
        out.push_back(std::move(msg));
    }
    return true;
}

}  // namespace

WEIR_TEST_SUITE_SETUP(JinjaReference) {
    REQUIRE_MSG(expected().isDict(), "expected.json did not load");
    REQUIRE(expected().get("families")->asList().size() >= 8);
    REQUIRE(expected().get("snippets")->asList().size() >= 100);
}

struct SnippetsRow {
    std::string name;
    int index;
};

static std::vector<SnippetsRow> snippetsRows() {
    std::vector<SnippetsRow> rows;
    const auto& list = expected().get("snippets")->asList();
    for (size_t i = 0; i < list.size(); ++i)
        rows.push_back({list[i].get("name")->asString().c_str(), static_cast<int>(i)});
    return rows;
}

WEIR_TEST(JinjaReference, snippets) {
    weirtest::eachRow(snippetsRows(), [&](const SnippetsRow& row) {
        const int& index = row.index;
        const Value& c = expected().get("snippets")->asList()[index];
        const Value& context = *expected().get("snippet_context");
        weir::jinja::RenderOptions options;
        options.fixedNow = expected().get("now")->asInt();
        const std::string source = c.get("template")->asString();
        if (const Value* out = c.get("output")) {
            std::string got;
            try {
                got = weir::jinja::Template(source).render(context, options);
            } catch (const weir::Error& e) {
                FAIL(std::string("jinja2 renders this, we failed: ") + e.what());
            }
            REQUIRE_EQ(bytes(got), bytes(out->asString()));
            return;
        }
        const bool raised = c.get("raised")->truthy();
        try {
            std::string got = weir::jinja::Template(source).render(context, options);
            FAIL("jinja2 fails here (" + std::string(c.get("error")->asString()) +
                             ") but we rendered: " + std::string(got));
        } catch (const weir::jinja::TemplateRaised& e) {
            REQUIRE_MSG(raised, e.what());
            REQUIRE_EQ(std::string(e.templateMessage()), std::string(c.get("error")->asString()));
        } catch (const weir::Error& e) {
            REQUIRE_MSG(!raised, e.what());
            REQUIRE_MSG(weirtest::startsWith(e.what(), "chat template: line "), e.what());
        }
    });
}

struct ConversationsRow {
    std::string name;
    int family;
    int index;
};

static std::vector<ConversationsRow> conversationsRows() {
    std::vector<ConversationsRow> rows;
    const auto& families = expected().get("families")->asList();
    for (size_t f = 0; f < families.size(); ++f) {
        const auto& cases = families[f].get("cases")->asList();
        for (size_t i = 0; i < cases.size(); ++i) {
            std::string row = families[f].get("family")->asString() + "/" + cases[i].get("name")->asString();
            rows.push_back({row.c_str(), static_cast<int>(f), static_cast<int>(i)});
        }
    }
    return rows;
}

WEIR_TEST(JinjaReference, conversations) {
    weirtest::eachRow(conversationsRows(), [&](const ConversationsRow& row) {
        const int& family = row.family;
        const int& index = row.index;
        const Value& fam = expected().get("families")->asList()[family];
        const Value& c = fam.get("cases")->asList()[index];
        const Value& ctx = *c.get("context");

        weir::ChatRenderOptions options;
        options.now = expected().get("now")->asInt();
        options.addGenerationPrompt = ctx.get("add_generation_prompt")->truthy();
        options.parseToolCallArguments = !c.get("raw_arguments");
        options.variables = Value::dict();
        for (const auto& e : ctx.asDict().entries) {
            if (e.first == "tools") options.tools = e.second;
            else if (e.first != "messages" && e.first != "add_generation_prompt" && e.first != "bos_token" &&
                     e.first != "eos_token")
                options.variables.set(e.first, e.second);
        }
        auto tmpl = makeTemplate(fam.get("template")->asString(), ctx.get("bos_token")->asString(),
                                 ctx.get("eos_token")->asString());
        const Value& messages = *ctx.get("messages");

        if (const Value* out = c.get("output")) {
            std::string got;
            try {
                got = tmpl->renderValues(messages, options);
            } catch (const weir::Error& e) {
                FAIL(std::string("jinja2 renders this, we failed: ") + e.what());
            }
            REQUIRE_EQ(bytes(got), bytes(out->asString()));
            std::vector<weir::ChatMessage> chat;
            if (asChatMessages(messages, chat)) REQUIRE_EQ(bytes(tmpl->render(chat, options)), bytes(out->asString()));
            return;
        }
        const bool raised = c.get("raised")->truthy();
        try {
            std::string got = tmpl->renderValues(messages, options);
            FAIL("jinja2 fails here (" + std::string(c.get("error")->asString()) +
                             ") but we rendered: " + std::string(got));
        } catch (const weir::jinja::TemplateRaised& e) {
            REQUIRE_MSG(raised, e.what());
            REQUIRE_EQ(std::string(e.templateMessage()), std::string(c.get("error")->asString()));
        } catch (const weir::Error& e) {
            REQUIRE_MSG(!raised, e.what());
            REQUIRE_MSG(weirtest::startsWith(e.what(), "chat template: line "), e.what());
        }
    });
}

// Prints how long rendering takes (no assertion on time): a 40-message
// conversation through the real Llama 3.1 and Qwen 3 templates.
WEIR_TEST(JinjaReference, renderSpeed) {
    Value messages = Value::list();
    for (int i = 0; i < 20; ++i) {
        Value u = Value::dict(), a = Value::dict();
        u.set("role", Value("user")).set("content", Value("Question number " + std::to_string(i) + ", about 20 words of text here to make it realistic enough."));
        a.set("role", Value("assistant")).set("content", Value(std::string(400, 'x')));
        messages.append(u);
        messages.append(a);
    }
    for (const char* name : {"llama3.1.jinja", "qwen3.jinja", "gemma3.jinja"}) {
        auto tmpl = weir::ChatTemplate::create(readFile(dataDir() + name), "<bos>", "<eos>");
        weir::ChatRenderOptions o;
        o.now = 0;
        size_t bytes = 0;
        const auto start = std::chrono::steady_clock::now();
        const int rounds = 200;
        for (int r = 0; r < rounds; ++r) bytes += tmpl->renderValues(messages, o).size();
        std::printf("  %s: %.1f us per render of 40 messages (%zu bytes)\n", name, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / rounds,
              bytes / rounds);
        REQUIRE(bytes > 0);
    }
}
