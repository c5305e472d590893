// Tests of the chat-template renderer (engine/chat): every template in tests/data/chat-templates x a set of
// conversations must render byte-for-byte as python3-jinja2 renders it with transformers' settings
// (tests/chat/render_reference.py), and where jinja2 raises we must fail too. Plus error messages and
// small Jinja features checked against the same reference.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "chat/chat_template.h"
#include "test_paths.h"

namespace slipway::chat {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const char* const kPython = "/usr/bin/python3";

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void write_file(const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
}

bool have_reference() {
    static const bool ok =
        std::system((std::string(kPython) + " -c 'import jinja2' >/dev/null 2>&1").c_str()) == 0;
    return ok;
}

// What python3-jinja2 makes of the template: the text, or nullopt when it raised (message in `error`).
struct Reference {
    bool raised = false;
    std::string text;
    std::string error;
};

Reference render_with_jinja2(const std::string& source, const json& context) {
    static int counter = 0;
    const fs::path dir = fs::temp_directory_path() / ("slipway-chat-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string stem = std::to_string(counter++);
    const fs::path tmpl = dir / (stem + ".jinja"), ctx = dir / (stem + ".json"), out = dir / (stem + ".out"),
                   err = dir / (stem + ".err");
    write_file(tmpl, source);
    write_file(ctx, context.dump());
    const std::string command = std::string(kPython) + " " + test_paths::source_dir() +
                                "/tests/chat/render_reference.py " + tmpl.string() + " " + ctx.string() +
                                " >" + out.string() + " 2>" + err.string();
    const int rc = std::system(command.c_str());
    Reference r;
    r.raised = rc != 0;
    r.text = read_file(out);
    r.error = read_file(err);
    fs::remove_all(dir / (stem + ".jinja"));
    for (const auto& p : {ctx, out, err})
        fs::remove(p);
    return r;
}

// One python3 run for many contexts (render_reference.py --batch).
std::vector<Reference> render_batch_with_jinja2(const std::string& source,
                                                const std::vector<json>& contexts) {
    const fs::path dir = fs::temp_directory_path() / ("slipway-chat-batch-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path tmpl = dir / "t.jinja", ctx = dir / "contexts.json", out = dir / "out.json";
    write_file(tmpl, source);
    write_file(ctx, json(contexts).dump());
    const std::string command = std::string(kPython) + " " + test_paths::source_dir() +
                                "/tests/chat/render_reference.py --batch " + tmpl.string() + " " +
                                ctx.string() + " >" + out.string();
    const int rc = std::system(command.c_str());
    std::vector<Reference> results;
    if (rc == 0) {
        for (const auto& r : json::parse(read_file(out))) {
            Reference reference;
            reference.raised = r.contains("error");
            reference.error = reference.raised ? r["error"].get<std::string>() : "";
            reference.text = reference.raised ? "" : r["text"].get<std::string>();
            results.push_back(std::move(reference));
        }
    }
    fs::remove_all(dir);
    return results;
}

json message(const std::string& role, const std::string& content) {
    return {{"role", role}, {"content", content}};
}

// The conversations every template is rendered with.
std::vector<std::pair<std::string, json>> conversations() {
    const json base = {{"bos_token", "<s>"}, {"eos_token", "</s>"}};
    std::vector<std::pair<std::string, json>> out;
    const auto add = [&](const std::string& name, json messages, bool generation_prompt,
                         json extra = json::object()) {
        json context = base;
        context["messages"] = std::move(messages);
        context["add_generation_prompt"] = generation_prompt;
        for (auto& [k, v] : extra.items())
            context[k] = v;
        out.emplace_back(name, std::move(context));
    };
    add("system_user", {message("system", "You are a helpful assistant."), message("user", "Hello!")}, true);
    add("system_user_no_prompt",
        {message("system", "You are a helpful assistant."), message("user", "Hello!")}, false);
    add("no_system", {message("user", "What is 2+2?")}, true);
    add("multi_turn",
        {message("user", "Hi"), message("assistant", "Hello! How can I help?"),
         message("user", "Tell me a joke.")},
        true);
    add("multi_turn_ends_with_assistant",
        {message("system", "Be brief."), message("user", "Hi"), message("assistant", "Hello."),
         message("user", "Bye"), message("assistant", "Goodbye.")},
        false);
    add("russian",
        {message("system",
                 "Ты — Сайга, русскоязычный автоматический ассистент. Ты разговариваешь с людьми и помогаешь "
                 "им."),
         message("user", "Почему трава зелёная?"), message("assistant", "Из-за хлорофилла."),
         message("user", "А небо — голубое?")},
        true, {{"bos_token", "<|begin_of_text|>"}, {"eos_token", "<|eot_id|>"}});
    add("quotes_newlines_braces",
        {message("user", "  He said \"hi\" and 'bye'\n\nthen {{ x }} {% if %} {# c #} \\n \\ end\t "),
         message("assistant", "\n{\"a\": [1, 2]}\n"), message("user", "}}{{")},
        true);
    add("whitespace_content", {message("user", "   "), message("assistant", ""), message("user", "\n")},
        true);
    add("thinking_assistant",
        {message("user", "2+2?"), message("assistant", "<think>\nadd them\n</think>\n\n4"),
         message("user", "3+3?")},
        true, {{"enable_thinking", false}});
    add("assistant_first", {message("assistant", "I speak first."), message("user", "OK")}, true);
    add("two_users", {message("user", "one"), message("user", "two")}, true);
    add("empty_messages", json::array(), true);
    add("unknown_role", {message("user", "hi"), message("critic", "meh")}, false);
    json tool = {{"type", "function"},
                 {"function",
                  {{"name", "get_weather"},
                   {"description", "Weather in a city — «Москва»"},
                   {"parameters",
                    {{"type", "object"},
                     {"properties", {{"city", {{"type", "string"}}}}},
                     {"required", json::array({"city"})}}}}}};
    json call = {
        {"role", "assistant"},
        {"tool_calls",
         json::array({{{"type", "function"},
                       {"function", {{"name", "get_weather"}, {"arguments", {{"city", "Moscow"}}}}}}})}};
    json call_with_content = call;
    call_with_content["content"] = "";
    call_with_content["tool_calls"][0]["id"] = "call00001";  // Mistral wants 9 characters
    json tool_result = message("tool", "{\"temp\": 5}");
    tool_result["tool_call_id"] = "call00001";
    add("tools",
        {message("system", "Use tools."), message("user", "Weather in Moscow?"), call_with_content,
         tool_result, message("user", "Thanks")},
        true, {{"tools", json::array({tool})}});
    add("tools_alternating",
        {message("user", "Weather in Moscow?"), call_with_content, tool_result,
         message("assistant", "5 degrees."), message("user", "Thanks")},
        true, {{"tools", json::array({tool})}});
    add("tools_no_messages", json::array(), true, {{"tools", json::array({tool})}});
    add("tool_call_without_content", {message("user", "Weather?"), call}, false);
    add("date_and_custom_tokens", {message("user", "Date?")}, true,
        {{"date_string", "01 Jan 2025"}, {"bos_token", "[BOS]"}, {"eos_token", "[EOS]"}});
    return out;
}

std::vector<fs::path> template_files() {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(fs::path(test_paths::test_data_dir()) / "chat-templates"))
        if (entry.path().extension() == ".jinja") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    return files;
}

TEST(ChatTemplate, EveryTemplateTimesEveryConversationMatchesJinja2) {
    if (!have_reference())
        GTEST_SKIP() << "python3-jinja2 is not installed (packaging/install-deps.sh installs it)";
    const auto files = template_files();
    ASSERT_GE(files.size(), 6u);
    int pairs = 0, identical_text = 0, both_raised = 0;
    for (const auto& file : files) {
        const std::string source = read_file(file);
        auto parsed = parse_chat_template(source);
        ASSERT_TRUE(parsed.ok()) << file << ": " << parsed.error();
        const auto named = conversations();
        std::vector<json> contexts;
        for (const auto& [unused, context] : named)
            contexts.push_back(context);
        const std::vector<Reference> references = render_batch_with_jinja2(source, contexts);
        ASSERT_EQ(references.size(), named.size()) << "render_reference.py --batch failed for " << file;
        for (size_t i = 0; i < named.size(); ++i) {
            const auto& [name, context] = named[i];
            SCOPED_TRACE(file.filename().string() + " x " + name);
            ++pairs;
            const Reference& expected = references[i];
            const auto got = render(*parsed, context);
            if (expected.raised) {
                EXPECT_FALSE(got.ok()) << "jinja2 raised (" << expected.error << ") but we rendered:\n"
                                       << *got;
                if (!got.ok()) ++both_raised;
                std::cout << "[ chat templates ] raised by both: " << file.filename().string() << " x "
                          << name << ": " << got.error() << "\n";
                // raise_exception's message must reach the caller.
                const std::string prefix = "TemplateError: ";
                if (!got.ok() && expected.error.rfind(prefix, 0) == 0) {
                    std::string text = expected.error.substr(prefix.size());
                    if (!text.empty() && text.back() == '\n') text.pop_back();
                    EXPECT_NE(got.error().find("raise_exception: " + text), std::string::npos) << got.error();
                }
                continue;
            }
            ASSERT_TRUE(got.ok()) << got.error() << "\njinja2 rendered:\n" << expected.text;
            EXPECT_EQ(*got, expected.text);
            if (*got == expected.text) ++identical_text;
        }
    }
    std::cout << "[ chat templates ] " << files.size() << " templates x " << conversations().size()
              << " conversations: " << identical_text + both_raised << "/" << pairs << " agree with jinja2 ("
              << identical_text << " byte-identical renders, " << both_raised << " raised by both)\n";
    EXPECT_EQ(identical_text + both_raised, pairs);
}

// Seeded random conversations (roles in and out of order, Russian, emoji, whitespace, template-like text,
// thinking tags, empty strings) through every template: both renderers must agree on each.
TEST(ChatTemplate, RandomConversationsMatchJinja2) {
    if (!have_reference()) GTEST_SKIP() << "python3-jinja2 is not installed";
    const std::vector<std::string> fragments = {"Hello",
                                                "Привет, мир!",
                                                "  spaced  ",
                                                "\n",
                                                "{{ not code }}",
                                                "{% if x %}",
                                                "quote \" and '",
                                                "tab\there",
                                                "<think>why</think>answer",
                                                "<think>\nhm\n</think>\n\nok",
                                                "</tool_response>",
                                                "emoji 🙂 ok",
                                                "",
                                                "back\\slash",
                                                "#}{#",
                                                "Ёлки-палки"};
    const std::vector<std::string> roles = {"user", "assistant", "system", "tool"};
    std::mt19937 rng(20261123);
    const auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    std::vector<json> contexts;
    for (int i = 0; i < 60; ++i) {
        json messages = json::array();
        if (pick(2) == 0) messages.push_back(message("system", fragments[pick(fragments.size())]));
        const size_t n = pick(6);
        for (size_t m = 0; m < n; ++m) {
            const std::string role =
                pick(7) == 0 ? roles[pick(roles.size())] : (m % 2 == 0 ? "user" : "assistant");
            std::string content;
            for (size_t k = 0, parts = 1 + pick(3); k < parts; ++k)
                content += fragments[pick(fragments.size())];
            messages.push_back(message(role, content));
        }
        json context = {{"messages", messages},
                        {"add_generation_prompt", pick(2) == 0},
                        {"bos_token", pick(2) ? "<s>" : "<|begin_of_text|>"},
                        {"eos_token", pick(2) ? "</s>" : "<|eot_id|>"}};
        if (pick(3) == 0) context["enable_thinking"] = pick(2) == 0;
        contexts.push_back(std::move(context));
    }
    int agree = 0, total = 0, raised = 0;
    for (const auto& file : template_files()) {
        const std::string source = read_file(file);
        auto parsed = parse_chat_template(source);
        ASSERT_TRUE(parsed.ok()) << parsed.error();
        const auto expected = render_batch_with_jinja2(source, contexts);
        ASSERT_EQ(expected.size(), contexts.size()) << "render_reference.py --batch failed for " << file;
        for (size_t i = 0; i < contexts.size(); ++i) {
            SCOPED_TRACE(file.filename().string() + " x random " + std::to_string(i) + ": " +
                         contexts[i].dump());
            ++total;
            const auto got = render(*parsed, contexts[i]);
            if (expected[i].raised) {
                EXPECT_FALSE(got.ok()) << "jinja2 raised (" << expected[i].error << ") but we rendered:\n"
                                       << *got;
                agree += !got.ok();
                raised += !got.ok();
                continue;
            }
            ASSERT_TRUE(got.ok()) << got.error();
            EXPECT_EQ(*got, expected[i].text);
            agree += *got == expected[i].text;
        }
    }
    std::cout << "[ chat templates ] random conversations: " << agree << "/" << total
              << " agree with jinja2 (" << raised << " raised by both)\n";
}

// Tools as a caller writes them (keys not sorted): render_ordered keeps their order, as Python dicts do, so
// the tool schemas print exactly as transformers prints them.
TEST(ChatTemplate, RenderOrderedKeepsKeyOrderLikePython) {
    if (!have_reference()) GTEST_SKIP() << "python3-jinja2 is not installed";
    const auto context = nlohmann::ordered_json::parse(R"({
      "messages": [{"role": "user", "content": "Weather?"},
                   {"role": "assistant", "content": "",
                    "tool_calls": [{"type": "function", "id": "call00001",
                                    "function": {"name": "get_weather", "arguments": {"unit": "C", "city": "Omsk"}}}]}],
      "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
                 "parameters": {"type": "object", "required": ["city"],
                                "properties": {"unit": {"type": "string"}, "city": {"type": "string"}}}}}],
      "add_generation_prompt": false, "bos_token": "<s>", "eos_token": "</s>",
      "d": {"z": 1, "a": 2}})");
    int same = 0, total = 0;
    std::vector<std::string> sources = {
        "{{ d|tojson }} {{ d|tojson(sort_keys=true) }} {% for k in d %}{{ k }}{% endfor %}"};
    for (const auto& file : template_files())
        sources.push_back(read_file(file));
    for (const auto& source : sources) {
        SCOPED_TRACE(source.substr(0, 60));
        const fs::path dir =
            fs::temp_directory_path() / ("slipway-chat-ordered-" + std::to_string(::getpid()));
        fs::create_directories(dir);
        write_file(dir / "t.jinja", source);
        write_file(dir / "c.json", context.dump());
        const std::string command = std::string(kPython) + " " + test_paths::source_dir() +
                                    "/tests/chat/render_reference.py " + (dir / "t.jinja").string() + " " +
                                    (dir / "c.json").string() + " >" + (dir / "out").string() +
                                    " 2>/dev/null";
        const bool raised = std::system(command.c_str()) != 0;
        const std::string expected = read_file(dir / "out");
        fs::remove_all(dir);
        auto parsed = parse_chat_template(source);
        ASSERT_TRUE(parsed.ok()) << parsed.error();
        const auto got = render_ordered(*parsed, context);
        ++total;
        if (raised) {
            EXPECT_FALSE(got.ok());
            same += !got.ok();
            continue;
        }
        ASSERT_TRUE(got.ok()) << got.error();
        EXPECT_EQ(*got, expected);
        same += *got == expected;
    }
    std::cout << "[ chat templates ] insertion-ordered tools: " << same << "/" << total
              << " agree with jinja2\n";
}

// Small templates for the Jinja features one at a time, each against the reference.
TEST(ChatTemplate, JinjaFeaturesMatchJinja2) {
    if (!have_reference()) GTEST_SKIP() << "python3-jinja2 is not installed";
    const json context = {
        {"messages", json::array({message("user", "a"), message("assistant", "b"), message("user", "c")})},
        {"n", 7},
        {"x", 2.5},
        {"s", "  Hello, World  "},
        {"d", {{"k", "v"}, {"a", json::array({1, 2})}}},
        {"flag", true},
        {"nothing", nullptr}};
    const std::vector<std::string> templates = {
        "{{ n % 2 }} {{ n // 2 }} {{ n / 2 }} {{ -n }} {{ n ** 2 }} {{ x * 2 }} {{ n - 10 }} {{ 1 + 2 * 3 }}",
        "{{ s|trim }}|{{ s.strip() }}|{{ s.lstrip() }}|{{ s.rstrip() }}|{{ s|upper }}|{{ s|lower }}|{{ "
        "s|length }}",
        "{{ s.split(',') }} {{ s.split() }} {{ s.startswith('  He') }} {{ s.endswith(('x', '  ')) }}",
        "{{ messages[-1].content }}{{ messages[1:]|length }}{{ messages[::-1][0]['content'] }}{{ messages[5] "
        "is defined }}",
        "{% for m in messages %}{{ loop.index0 }}{{ loop.index }}{{ loop.first }}{{ loop.last }}{{ "
        "loop.length }}"
        "{{ loop.revindex }} {% endfor %}",
        "{% for m in messages if m.role == 'user' %}{{ m.content }}{{ loop.length }}{% else %}none{% endfor "
        "%}",
        "{% set ns = namespace(count=0, seen=false) %}{% for m in messages %}{% set ns.count = ns.count + 1 "
        "%}"
        "{% if m.role == 'assistant' %}{% set ns.seen = true %}{% endif %}{% endfor %}{{ ns.count }} {{ "
        "ns.seen }}",
        "{% set v = 1 %}{% for m in messages %}{% set v = v + 1 %}{% endfor %}{{ v }}",
        "{{ d|tojson }} {{ d|tojson(indent=2) }} {{ 'ы\"\\n'|tojson }} {{ [1, 'a', none, true, 1.5]|tojson "
        "}}",
        "{{ d }} {{ [1, 'a', none, true] }} {{ nothing }} {{ flag }} {{ undefined_var }} {{ 'it''s' }}",
        "{{ d|items|list|length }} {% for k, v in d|items %}{{ k }}={{ v }};{% endfor %} {{ d.get('k') }} {{ "
        "d.get('z', 3) }}",
        "{{ missing|default('dflt') }} {{ ''|default('e', true) }} {{ messages|first }} {{ "
        "(messages|last).role }}",
        "{{ ['a','b','code_interpreter']|reject('equalto', 'code_interpreter')|join(', ') }} "
        "{{ messages|selectattr('role', 'equalto', 'user')|map(attribute='content')|join }}",
        "{{ 'a' in 'cat' }} {{ 'k' in d }} {{ 3 not in [1, 2] }} {{ n is odd }} {{ n is even }} {{ n is "
        "number }}",
        "{{ nothing is none }} {{ s is string }} {{ d is mapping }} {{ messages is sequence }} {{ n is not "
        "defined }}",
        "{{ 'yes' if flag else 'no' }} {{ 'yes' if nothing }}|{{ flag and 'A' or 'B' }} {{ not flag }}",
        "{{ 'a' ~ 1 ~ none }} {{ [1] + [2] }} {{ 'ab' * 2 }} {{ (1, 2)|length }} {{ n > 3 and n <= 7 }} {{ "
        "'a' < 'b' }}",
        "  {% if flag %}\n    x\n  {% endif %}\n  {%+ if flag %}y{% endif %}\n{# comment #}\n  z  {{- ' w ' "
        "-}}  q\n",
        "{%- for m in messages -%}\n  {{ m.content }}\n{%- endfor %}\n\n  {% for i in range(3) %}{{ i }}{% "
        "endfor %}\n",
        "{% for i in range(5) %}{% if i == 1 %}{% continue %}{% endif %}{% if i == 3 %}{% break %}{% endif "
        "%}{{ i }}"
        "{% endfor %}",
        "{% set block %}in {{ n }}{% endset %}[{{ block }}] {{ 'Hello World'|title }} {{ 'x'|capitalize }} "
        "{{ 'a-b-c'|replace('-', '+') }} {{ '3'|int + 1 }} {{ n|string + '!' }}",
        "{{ \"\\u00e9\\x41\\t\" }} {{ 'ünï'[1] }} {{ 'ünïcode'[1:3] }} {{ 'Привет'|length }}",
        "{% if n == 7.0 %}eq{% endif %} {{ 1 == true }} {{ messages[0] == {'role': 'user', 'content': 'a'} "
        "}}",
    };
    int same = 0;
    for (const auto& source : templates) {
        SCOPED_TRACE(source);
        const Reference expected = render_with_jinja2(source, context);
        ASSERT_FALSE(expected.raised) << expected.error;
        auto parsed = parse_chat_template(source);
        ASSERT_TRUE(parsed.ok()) << parsed.error();
        const auto got = render(*parsed, context);
        ASSERT_TRUE(got.ok()) << got.error();
        EXPECT_EQ(*got, expected.text);
        same += *got == expected.text;
    }
    std::cout << "[ chat templates ] feature templates: " << same << "/" << templates.size()
              << " identical\n";
}

// Every truncation of every template parses or fails with a message; what parses renders or fails: no crash.
TEST(ChatTemplate, TruncatedTemplatesFailCleanly) {
    const json context = conversations()[3].second;
    int parse_errors = 0, render_errors = 0, rendered = 0;
    for (const auto& file : template_files()) {
        const std::string source = read_file(file);
        for (size_t n = 0; n <= source.size(); ++n) {
            const auto parsed = parse_chat_template(std::string_view(source).substr(0, n));
            if (!parsed.ok()) {
                EXPECT_EQ(parsed.error().rfind("chat template: ", 0), 0u) << parsed.error();
                ++parse_errors;
                continue;
            }
            const auto got = render(*parsed, context);
            got.ok() ? ++rendered : ++render_errors;
        }
    }
    std::cout << "[ chat templates ] truncations: " << parse_errors << " parse errors, " << render_errors
              << " render errors, " << rendered << " rendered\n";
}

TEST(ChatTemplate, ErrorsNameTheLineAndColumn) {
    // Like Jinja2, an unknown filter or test fails when the template is parsed, not as an empty string.
    const auto unknown_filter = parse_chat_template("line one\n{{ messages | frobnicate }}");
    ASSERT_FALSE(unknown_filter.ok());
    EXPECT_EQ(unknown_filter.error(), "chat template: line 2 column 15: unknown filter 'frobnicate'");
    const auto unknown_test = parse_chat_template("{% if x is shiny %}{% endif %}");
    ASSERT_FALSE(unknown_test.ok());
    EXPECT_EQ(unknown_test.error(), "chat template: line 1 column 12: unknown test 'shiny'");
    const auto bad_operand = parse_chat_template("{{ 'a' + 1 }}");
    ASSERT_TRUE(bad_operand.ok());
    const auto r = render(*bad_operand, json::object());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), "chat template: line 1 column 4: unsupported operand types for +: str and int");

    const auto unclosed = parse_chat_template("ok\n  {% if x %}never closed");
    ASSERT_FALSE(unclosed.ok());
    EXPECT_NE(unclosed.error().find("expected elif or else or endif"), std::string::npos) << unclosed.error();

    const auto bad_tag = parse_chat_template("{% macro m() %}{% endmacro %}");
    ASSERT_FALSE(bad_tag.ok());
    EXPECT_NE(bad_tag.error().find("line 1 column 4: unknown or unsupported tag 'macro'"), std::string::npos)
        << bad_tag.error();

    const auto deep =
        parse_chat_template("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}");
    ASSERT_FALSE(deep.ok());
    EXPECT_NE(deep.error().find("nested deeper than 200 levels"), std::string::npos) << deep.error();
    std::string nested_ifs;
    for (int i = 0; i < 1000; ++i)
        nested_ifs += "{% if true %}";
    const auto deep_ifs = parse_chat_template(nested_ifs);
    ASSERT_FALSE(deep_ifs.ok());
    EXPECT_NE(deep_ifs.error().find("nested deeper than 200 levels"), std::string::npos) << deep_ifs.error();

    const auto raising = parse_chat_template("{{ raise_exception('Only user and assistant roles!') }}");
    ASSERT_TRUE(raising.ok());
    const auto raised = render(*raising, json::object());
    ASSERT_FALSE(raised.ok());
    EXPECT_EQ(raised.error(),
              "chat template: line 1 column 19: raise_exception: Only user and assistant roles!");

    const auto undefined_attribute = parse_chat_template("{{ messages[0].role }}");
    const auto undefined = render(*undefined_attribute, {{"messages", json::array()}});
    ASSERT_FALSE(undefined.ok());
    EXPECT_NE(undefined.error().find("line 1 column 15"), std::string::npos) << undefined.error();
}

}  // namespace
}  // namespace slipway::chat
