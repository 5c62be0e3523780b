// Tokens and cost read from what agents write (docs/cost.md), against streams recorded from
// the real CLIs driven by the scripted model APIs (tests/golden/streams/usage-*.jsonl: three
// answers each of 1200 input tokens, 200 of them cached, and 50 output tokens), the built-in
// agents' usage.jsonl and a script's own line; priced by the table and by `pricing`.
#include "agent/usage.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "test_support.h"

namespace cocode::agent {
namespace {

namespace fs = std::filesystem;
using test::read_text;

const fs::path kStreams = fs::path(COCODE_SOURCE_DIR) / "tests/golden/streams";

run::Tokens tokens(std::uint64_t input, std::uint64_t output, std::uint64_t cached) {
    return {input, output, cached};
}

UsageReader read_stream(const std::string& name, std::string model = {}, std::size_t chunk = 7) {
    UsageReader reader(std::move(model));
    const std::string text = read_text(kStreams / name);
    // Fed in small pieces, as the supervisor reads a stream still being written.
    for (std::size_t at = 0; at < text.size(); at += chunk)
        reader.feed(std::string_view(text).substr(at, chunk));
    return reader;
}

TEST(Usage, ClaudesResultEventSettlesItsTokensAndItsOwnCost) {
    const UsageReader reader = read_stream("usage-claude.jsonl");
    EXPECT_EQ(reader.tokens(), tokens(3600, 150, 600));
    ASSERT_EQ(reader.models().size(), 1u);
    EXPECT_EQ(reader.models()[0].model, "claude-opus-5-5");
    const run::RunUsage usage = price_usage(reader, "key", {});
    ASSERT_TRUE(usage.cost_usd);
    EXPECT_DOUBLE_EQ(*usage.cost_usd, 0.01512);
    EXPECT_EQ(usage.cost_source, "reported by claude");
}

TEST(Usage, ClaudeMidStreamCountsEachMessageOnceAndIsPricedByTheTable) {
    // Up to its result event: each assistant message's usage, once, though claude repeats
    // it for every content block of the message.
    std::string text = read_text(kStreams / "usage-claude.jsonl");
    text.pop_back();
    text = text.substr(0, text.rfind('\n') + 1);  // all but the last line, its result
    ASSERT_EQ(text.find("\"result\""), std::string::npos);
    UsageReader reader;
    reader.feed(text);
    EXPECT_EQ(reader.tokens(), tokens(3600, 150, 600));
    EXPECT_FALSE(reader.reported_cost());
    // claude-opus-5-5 is in no table: priced by the configuration's own.
    const run::RunUsage usage =
        price_usage(reader, "key", {{"claude-opus-5", config::Price{5, 25, 0.5}}});
    ASSERT_TRUE(usage.cost_usd);
    EXPECT_NEAR(*usage.cost_usd, (3000 * 5 + 600 * 0.5 + 150 * 25) / 1e6, 1e-12);
    EXPECT_EQ(usage.cost_source, "pricing in the config");
}

TEST(Usage, CodexTurnsAreSummedAndPricedByTheAgentsModel) {
    const UsageReader reader = read_stream("usage-codex.jsonl", "gpt-5-codex");
    EXPECT_EQ(reader.tokens(), tokens(3600, 150, 600));
    const run::RunUsage usage = price_usage(reader, "key", {});
    ASSERT_TRUE(usage.cost_usd);
    // gpt-5: $1.25 in, $0.125 cached, $10 out per million.
    EXPECT_NEAR(*usage.cost_usd, (3000 * 1.25 + 600 * 0.125 + 150 * 10) / 1e6, 1e-12);
    EXPECT_EQ(usage.cost_source, std::string("price table of ") + kPriceTableDate);

    // Without a model (the stream names none, and no session file is here): no cost.
    const run::RunUsage unknown = price_usage(read_stream("usage-codex.jsonl"), "key", {});
    EXPECT_FALSE(unknown.cost_usd);
    EXPECT_EQ(unknown.cost_source, "the model is not known (set the agent's model)");
    EXPECT_EQ(unknown.tokens, tokens(3600, 150, 600));
}

// The later seven CLIs' streams as recorded (tests/golden/streams/NAME.jsonl: five answers of
// 1200 input tokens, 200 cached, and 50 output): each counts every answer once, however its
// stream repeats it (pi's turn_end and agent_end, cline's running totals, droid's one
// account at its end), told from the lines or declared by the preset. copilot's stream names
// no tokens at all, and none are made up.
struct RecordedUsage {
    const char* cli;
    const char* stream;
    run::Tokens expected;
    const char* model;  // the model the stream names; "" when it names none
};
void PrintTo(const RecordedUsage& r, std::ostream* out) { *out << r.cli; }

class RecordedUsageOf : public ::testing::TestWithParam<RecordedUsage> {};

TEST_P(RecordedUsageOf, EachAnswerCountsOnce) {
    const auto& r = GetParam();
    const std::string file = std::string(r.cli) + ".jsonl";
    for (auto declared : {StreamKind::unknown, stream_kind(r.stream)}) {
        UsageReader reader("gpt-fake", declared);
        const std::string text = read_text(kStreams / file);
        for (std::size_t at = 0; at < text.size(); at += 7)
            reader.feed(std::string_view(text).substr(at, 7));
        EXPECT_EQ(reader.tokens(), r.expected) << stream_kind_name(declared);
        if (r.expected.total() > 0) {
            ASSERT_EQ(reader.models().size(), 1u);
            EXPECT_EQ(reader.models()[0].model, *r.model ? r.model : "gpt-fake");
        }
    }
}

INSTANTIATE_TEST_SUITE_P(
    Clis, RecordedUsageOf,
    ::testing::Values(RecordedUsage{"copilot", "copilot", tokens(0, 0, 0), ""},
                      RecordedUsage{"opencode", "opencode", tokens(6000, 250, 1000), ""},
                      RecordedUsage{"kilo", "opencode", tokens(6000, 250, 1000), ""},
                      RecordedUsage{"qwen", "qwen", tokens(6000, 250, 1000), "gpt-fake"},
                      RecordedUsage{"pi", "pi", tokens(6000, 250, 1000), "gpt-fake"},
                      RecordedUsage{"cline", "cline", tokens(6000, 250, 1000), ""},
                      RecordedUsage{"droid", "droid", tokens(6000, 250, 1000), ""}),
    [](const auto& each) { return std::string(each.param.cli); });

TEST(Usage, GeminiStatsArePerModelAndAnUnpricedModelMeansNoCost) {
    const UsageReader reader = read_stream("usage-gemini.jsonl", {}, 4096);
    EXPECT_EQ(reader.tokens(), tokens(4800, 200, 800));
    const auto models = reader.models();
    ASSERT_EQ(models.size(), 2u);
    EXPECT_EQ(models[0].model, "gemini-3.5-flash-lite");
    EXPECT_EQ(models[0].tokens, tokens(1200, 50, 200));
    EXPECT_EQ(models[1].model, "gemini-3.8-flash");
    EXPECT_EQ(models[1].tokens, tokens(3600, 150, 600));
    const run::RunUsage usage = price_usage(reader, "key", {});
    EXPECT_FALSE(usage.cost_usd);
    EXPECT_EQ(usage.cost_source, "no price for gemini-3.5-flash-lite");
    // A price for each, the longest name that matches winning.
    const run::RunUsage priced = price_usage(
        reader, "key",
        {{"gemini-", config::Price{1, 1, 1}}, {"gemini-3.8", config::Price{2, 10, 0.5}}});
    ASSERT_TRUE(priced.cost_usd);
    EXPECT_NEAR(*priced.cost_usd, (1200 + 50 + 3000 * 2 + 600 * 0.5 + 150 * 10) / 1e6, 1e-12);
}

TEST(Usage, ASubscriptionShowsTokensNotDollars) {
    const run::RunUsage usage = price_usage(read_stream("usage-claude.jsonl"), "subscription", {});
    EXPECT_EQ(usage.tokens, tokens(3600, 150, 600));
    EXPECT_FALSE(usage.cost_usd) << "claude's own figure is not what a plan costs";
    EXPECT_EQ(usage.cost_source, "subscription: tokens only");
}

TEST(Usage, AScriptsOwnLinesAndTheBuiltInAgentsUsageFileAreRead) {
    // A script's lines are each model's totals so far: the latest counts.
    UsageReader script;
    script.feed(
        "working\n{\"type\":\"cocode.usage\",\"model\":\"gpt-4o\",\"input_tokens\":500,"
        "\"output_tokens\":50}\n");
    script.feed(
        "{\"type\":\"cocode.usage\",\"model\":\"gpt-4o\",\"input_tokens\":1000,"
        "\"output_tokens\":100,\"cached_tokens\":400}\n");
    script.feed(
        "{\"type\":\"cocode.usage\",\"model\":\"m-2\",\"input_tokens\":10,"
        "\"output_tokens\":1,\"cost_usd\":0.5}\n{\"type\":\"cocode.usage\",\"input");
    EXPECT_EQ(script.tokens(), tokens(1010, 101, 400));
    const run::RunUsage usage = price_usage(script, "", {});
    ASSERT_TRUE(usage.cost_usd);
    // Its own figure where it gave one, the table for the rest.
    EXPECT_NEAR(*usage.cost_usd, 0.5 + (600 * 2.5 + 400 * 1.25 + 100 * 10) / 1e6, 1e-12);
    EXPECT_EQ(usage.cost_source,
              std::string("reported by the agent and price table of ") + kPriceTableDate);

    UsageReader builtin("sonar");
    builtin.feed(
        "{\"time\":\"2026-11-25T10:00:00Z\",\"call\":\"turn 1\",\"model\":\"sonar\","
        "\"prompt_tokens\":300,\"completion_tokens\":20,\"total_tokens\":320}\n");
    EXPECT_EQ(builtin.tokens(), tokens(300, 20, 0));
    EXPECT_NEAR(*price_usage(builtin, "key", {}).cost_usd, 320 / 1e6, 1e-12);
}

TEST(Usage, OnlyLinesThatStartWithABraceAreLookedInto) {
    // Fed a byte at a time: a '{' within a line starts nothing; the line after it does.
    const std::string text =
        "a {\"type\":\"cocode.usage\",\"input_tokens\":999} mid-line\n"
        "{\"type\":\"cocode.usage\",\"model\":\"gpt-4o\",\"input_tokens\":7,\"output_tokens\":3}"
        "\r\n{not json\n{\"type\":\"cocode.usage\",\"input_tokens\":1}";
    UsageReader reader;
    for (char c : text) reader.feed(std::string_view(&c, 1));
    EXPECT_EQ(reader.tokens(), tokens(7, 3, 0)) << "the last line has not ended yet";
    reader.feed("\n");
    EXPECT_EQ(reader.tokens(), tokens(8, 3, 0));
}

TEST(Usage, NothingReportedIsNoUsage) {
    UsageReader reader;
    reader.feed("plain text\n{\"level\":\"info\",\"message\":\"usage: none\"}\n");
    const run::RunUsage usage = price_usage(reader, "key", {});
    EXPECT_TRUE(usage.empty());
    EXPECT_EQ(usage.cost_source, "");
}

TEST(Usage, TheTableMatchesDatedNamesAndTheLongestPrefix) {
    bool from_config = true;
    auto sonnet = price_of("claude-sonnet-4-5-20250929", {}, &from_config);
    ASSERT_TRUE(sonnet);
    EXPECT_FALSE(from_config);
    EXPECT_EQ(sonnet->input, 3);
    EXPECT_EQ(price_of("claude-opus-4-5-20251101", {})->input, 5);
    EXPECT_EQ(price_of("claude-opus-4-1-20250805", {})->input, 15);
    EXPECT_EQ(price_of("gpt-5-mini", {})->output, 2);
    EXPECT_EQ(price_of("models/gemini-2.5-pro", {})->output, 10);
    EXPECT_FALSE(price_of("some-local-model", {}));
    EXPECT_EQ(price_of("some-local-model", {{"some-local", config::Price{0, 0, 0}}})->input, 0);
}

TEST(Usage, BudgetsAreCrossedByTokensOrByCost) {
    config::AgentConfig agent;
    run::RunUsage usage;
    usage.tokens = tokens(900, 100, 0);
    usage.cost_usd = 0.75;
    EXPECT_FALSE(budget_crossed(agent, usage));
    agent.max_tokens = 1000;
    EXPECT_FALSE(budget_crossed(agent, usage)) << "at the budget is not past it";
    agent.max_tokens = 999;
    EXPECT_EQ(budget_crossed(agent, usage), "used 1000 tokens, past max_tokens 999");
    agent.max_tokens.reset();
    agent.max_cost_usd = 0.5;
    EXPECT_EQ(budget_crossed(agent, usage), "cost $0.75, past max_cost_usd $0.50");
    usage.cost_usd.reset();  // a subscription: dollars cannot be crossed
    EXPECT_FALSE(budget_crossed(agent, usage));
}

TEST(Usage, BillingFollowsTheCredentialsTheAgentIsGiven) {
    config::AgentConfig claude;
    claude.type = config::AgentType::claude;
    EXPECT_EQ(billing_of(claude, {"HOME=/nonexistent", "ANTHROPIC_API_KEY=k"}), "key");
    EXPECT_EQ(billing_of(claude, {"HOME=/nonexistent", "CLAUDE_CODE_OAUTH_TOKEN=t"}),
              "subscription");
    config::AgentConfig codex;
    codex.type = config::AgentType::codex;
    EXPECT_EQ(billing_of(codex, {"CODEX_API_KEY=k"}), "key");
    const test::TempDir home;
    fs::create_directories(home.path() / ".codex");
    test::write_text(home.path() / ".codex/auth.json", R"({"auth_mode":"chatgpt","tokens":{}})");
    EXPECT_EQ(billing_of(codex, {"HOME=" + home.path().string()}), "subscription");
    test::write_text(home.path() / ".codex/auth.json", R"({"auth_mode":"apikey"})");
    EXPECT_EQ(billing_of(codex, {"HOME=" + home.path().string()}), "key");
    config::AgentConfig script;
    EXPECT_EQ(billing_of(script, {"OPENAI_API_KEY=k"}), "");
}

TEST(Usage, TheRecordRoundTripsAndReadsShort) {
    run::RunUsage usage;
    usage.models = {{"gpt-5", tokens(412'000, 9'000, 380'000)}};
    usage.tokens = tokens(412'000, 9'000, 380'000);
    usage.cost_usd = 1.84;
    usage.cost_source = "price table of 2025-11-24";
    usage.billing = "key";
    usage.attempts = {{tokens(1, 2, 0), 0.5}, {tokens(3, 4, 0), std::nullopt}};
    EXPECT_EQ(run::usage_from_json(run::usage_json(usage)), usage);
    EXPECT_EQ(run::format_tokens(usage.tokens), "412k in (380k cached) / 9k out");
    EXPECT_EQ(run::format_tokens(tokens(1'250'000, 999, 0)), "1.25M in / 999 out");
    EXPECT_EQ(run::format_cost(1.84), "$1.84");
    EXPECT_EQ(run::format_cost(0.0031), "$0.0031");
    EXPECT_EQ(run::format_cost(std::nullopt), "-");
}

}  // namespace
}  // namespace cocode::agent
