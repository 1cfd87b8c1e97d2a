// pagoda's Jinja engine: whitespace options, errors and the sandbox's limits. The language
// itself is compared with Python's jinja2 in tests/python/test_jinja_features.py; expected
// strings here follow jinja2 3.1 (checked against it when written).
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "io/jinja.h"
#include "io/jinja_chat.h"

namespace pagoda::jinja {
namespace {

using nlohmann::ordered_json;

std::string render(const std::string& source, const ordered_json& ctx = ordered_json::object(), Options o = {}) {
  return Template(source, o).render(ctx);
}

std::string error_of(const std::string& source, Options o = {}, const ordered_json& ctx = ordered_json::object()) {
  try {
    (void)Template(source, o).render(ctx);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

const char* kBlocks = "a\n  {% if true %}\n  b\n  {% endif %}\nc\n";

TEST(Jinja, DefaultWhitespaceKeepsEverythingButTheFinalNewline) {
  EXPECT_EQ(render(kBlocks), "a\n  \n  b\n  \nc");
}

TEST(Jinja, TrimBlocksDropsTheNewlineAfterATag) {
  Options o;
  o.trim_blocks = true;
  EXPECT_EQ(render(kBlocks, ordered_json::object(), o), "a\n    b\n  c");
}

TEST(Jinja, LstripBlocksDropsIndentBeforeATag) {
  Options o;
  o.lstrip_blocks = true;
  EXPECT_EQ(render(kBlocks, ordered_json::object(), o), "a\n\n  b\n\nc");
}

TEST(Jinja, ChatOptionsAreTransformersSettings) {
  EXPECT_EQ(render(kBlocks, ordered_json::object(), chat_template_options()), "a\n  b\nc");
}

TEST(Jinja, DashesStripAdjacentWhitespace) {
  EXPECT_EQ(render("x \n {%- if true -%} \n y \n {%- endif %}"), "xy");
  EXPECT_EQ(render("[ {{- 1 -}} ]"), "[1]");
}

TEST(Jinja, ContextValuesAreVisible) {
  const ordered_json ctx = {{"name", "Ann"}, {"items", {1, 2, 3}}, {"cfg", {{"z", 1}, {"a", 2}}}};
  EXPECT_EQ(render("{{ name }}:{{ items | sum }}:{% for k in cfg %}{{ k }}{% endfor %}", ctx), "Ann:6:za");
}

TEST(Jinja, DefaultTojsonIsJinja2sHtmlSafeSortedAscii) {
  EXPECT_EQ(render("{{ {'b': '<', 'a': '\xc3\xa9'} | tojson }}"), "{\"a\": \"\\u00e9\", \"b\": \"\\u003c\"}");
  EXPECT_EQ(render("{{ {'b': '<', 'a': '\xc3\xa9'} | tojson }}", ordered_json::object(), chat_template_options()),
            "{\"b\": \"<\", \"a\": \"\xc3\xa9\"}");
}

TEST(Jinja, ListsAreMutableOutsideTheChatSandbox) {
  EXPECT_EQ(render("{% set l = [] %}{{ l.append(1) }}{{ l }}"), "None[1]");
  EXPECT_NE(error_of("{% set l = [] %}{{ l.append(1) }}", chat_template_options()).find("unsafe"), std::string::npos);
}

TEST(Jinja, SyntaxErrorsNameLineAndColumn) {
  const std::string e = error_of("line one\n{{ 1 + }}");
  EXPECT_NE(e.find("syntax error at line 2, column 8"), std::string::npos) << e;
  EXPECT_NE(error_of("{% if true %}x").find("expected 'endif'"), std::string::npos);
  EXPECT_NE(error_of("{% frobnicate %}").find("unknown tag 'frobnicate'"), std::string::npos);
  EXPECT_NE(error_of("{% include 'x.j2' %}").find("not supported"), std::string::npos);
  EXPECT_NE(error_of("{{ 'open").find("string literal"), std::string::npos);
  EXPECT_NE(error_of("{# never closed").find("comment"), std::string::npos);
}

TEST(Jinja, RuntimeErrorsNameTheLine) {
  const std::string e = error_of("ok\n\n{{ missing.attr }}");
  EXPECT_NE(e.find("line 3"), std::string::npos) << e;
  EXPECT_NE(e.find("'missing' is undefined"), std::string::npos) << e;
}

TEST(Jinja, RaiseExceptionCarriesTheMessage) {
  const std::string e = error_of("{{ raise_exception('roles must alternate') }}", chat_template_options());
  EXPECT_NE(e.find("roles must alternate"), std::string::npos) << e;
  // Outside the chat environment raise_exception is not a global.
  EXPECT_NE(error_of("{{ raise_exception('x') }}").find("undefined"), std::string::npos);
}

TEST(Jinja, ContextMustBeAnObject) {
  EXPECT_THROW((void)Template("x").render(ordered_json::array()), Error);
}

TEST(JinjaSandbox, WorkIsBounded) {
  Options o;
  o.limits.max_steps = 100'000;
  const std::string e = error_of("{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}", o);
  EXPECT_NE(e.find("work limit"), std::string::npos) << e;
}

TEST(JinjaSandbox, OutputIsBounded) {
  Options o;
  o.limits.max_output_bytes = 10'000;
  EXPECT_NE(error_of("{% for i in range(1000) %}{{ 'xxxxxxxxxxxxxxxxxxxx' }}{% endfor %}", o).find("output exceeds"),
            std::string::npos);
}

TEST(JinjaSandbox, StringsAreBoundedBeforeAllocation) {
  Options small;
  small.limits.max_string_bytes = 1u << 20;
  EXPECT_NE(error_of("{{ 'x' * 1000000000000 }}").find("limit"), std::string::npos);
  EXPECT_NE(error_of("{{ [1, 2] * 1000000000000 }}").find("limit"), std::string::npos);
  EXPECT_NE(error_of("{% set ns = namespace(s='xxxxxxxx') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}", small)
                .find("limit"),
            std::string::npos);
}

TEST(JinjaSandbox, RangeIsBounded) {
  EXPECT_NE(error_of("{{ range(100001) | length }}").find("range too big"), std::string::npos);
  EXPECT_EQ(render("{{ range(100000) | length }}"), "100000");
}

TEST(JinjaSandbox, RecursionIsBounded) {
  const std::string e = error_of("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
  EXPECT_NE(e.find("nested deeper"), std::string::npos) << e;
  EXPECT_NE(error_of("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}").find("nested too deeply"), std::string::npos);
  EXPECT_NE(error_of("{{ " + std::string(5000, '-') + "1 }}").find("nested too deeply"), std::string::npos);
  std::string ifs;
  for (int i = 0; i < 1000; ++i) ifs += "{% if true %}";
  EXPECT_NE(error_of(ifs).find("nested too deeply"), std::string::npos);
}

TEST(JinjaSandbox, CyclicValuesFailCleanly) {
  // A list that holds itself cannot be printed (Python prints [...]; we refuse) and must not leak.
  EXPECT_NE(error_of("{% set l = [] %}{{ l.append(l) }}{{ l }}").find("nested too deeply"), std::string::npos);
  EXPECT_EQ(render("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns.me.me is defined }}"), "True");
  EXPECT_EQ(render("{% macro m() %}{{ m is defined }}{% endmacro %}{{ m() }}"), "True");
}

TEST(JinjaSandbox, IntegerOverflowIsAnError) {
  EXPECT_NE(error_of("{{ 9223372036854775807 + 1 }}").find("overflow"), std::string::npos);
  EXPECT_NE(error_of("{{ 2 ** 64 }}").find("overflow"), std::string::npos);
  EXPECT_NE(error_of("{{ 99999999999999999999 }}").find("too large"), std::string::npos);
  EXPECT_NE(error_of("{{ 1 // 0 }}").find("zero"), std::string::npos);
}

TEST(JinjaChat, RendersWithTransformersDefaults) {
  const std::string tmpl =
      "{% for m in messages %}{{ m.role }}:{{ m.content }}|{% endfor %}"
      "{{ tools is none }}{{ documents is none }}{{ add_generation_prompt }}{{ bos_token }}";
  const ordered_json ctx = {{"messages", {{{"role", "user"}, {"content", "hi"}, {"name", nullptr}}}},
                            {"bos_token", "<s>"}};
  EXPECT_EQ(render_chat_template(tmpl, ctx), "user:hi|TrueTrueFalse<s>");
}

TEST(JinjaChat, DropsNullFieldsAndAliasesReasoning) {
  const std::string tmpl = "{% for m in messages %}{% for k, v in m | items %}{{ k }}={{ v }};{% endfor %}{% endfor %}";
  const ordered_json ctx = {
      {"messages", {{{"role", "assistant"}, {"content", nullptr}, {"reasoning", "r"}}}}};
  EXPECT_EQ(render_chat_template(tmpl, ctx), "thinking=r;role=assistant;reasoning=r;reasoning_content=r;");
}

TEST(JinjaChat, ReadsTemplatesAndTokensFromTokenizerConfig) {
  const ordered_json list_config = {
      {"chat_template", {{{"name", "tool_use"}, {"template", "T"}}, {{"name", "default"}, {"template", "D"}}}},
      {"bos_token", {{"__type", "AddedToken"}, {"content", "<s>"}}},
      {"eos_token", "</s>"}};
  EXPECT_EQ(chat_template_from_config(list_config), "D");
  EXPECT_EQ(chat_template_from_config(list_config, "tool_use"), "T");
  EXPECT_THROW((void)chat_template_from_config(list_config, "nope"), Error);
  EXPECT_EQ(special_token_from_config(list_config, "bos_token"), "<s>");
  EXPECT_EQ(special_token_from_config(list_config, "eos_token"), "</s>");
  EXPECT_TRUE(special_token_from_config(list_config, "pad_token").is_null());
  EXPECT_THROW((void)chat_template_from_config(ordered_json::object()), Error);
  EXPECT_THROW((void)render_chat_template("x", ordered_json{{"messages", "not a list"}}), Error);
}

}  // namespace
}  // namespace pagoda::jinja
