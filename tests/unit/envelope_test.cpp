// The Codali envelopes: AGENT_REQUEST read in the seed's YAML-like form and as JSON,
// CODALI_RESPONSE written in both and read back, the errors a model gets for a malformed
// request (each naming what to correct), envelopes found among prose, fences and commands,
// and the YAML bridge's quoting (what a reader could mistake stays a string).
#include "protocol/envelope.h"

#include <gtest/gtest.h>

#include "core/yaml_json.h"

namespace cocode::test {
namespace {

using namespace cocode::protocol;
using ojson = nlohmann::ordered_json;

constexpr char kSeedRequest[] = R"(AGENT_REQUEST v1
role: architect
request_id: 123
needs:
  - type: docdex.search
    query: "landing page HTML"
    limit: 5
  - type: docdex.open
    path: "src/public/index.html"
    start_line: 1
    end_line: 200
  - type: file.list
    root: "."
    pattern: "**/*.html"
context:
  summary: "Need root page HTML to finish plan"
  constraints:
    - "Only touch HTML"
)";

TEST(Envelope, ReadsTheSeedsRequest) {
    auto request = parse_agent_request(kSeedRequest);
    ASSERT_TRUE(request.ok()) << request.error().message;
    EXPECT_EQ(request->role, "architect");
    EXPECT_EQ(request->request_id, "123");  // a number is read as its digits
    ASSERT_EQ(request->needs.size(), 3u);
    EXPECT_EQ(request->needs[0].type, "docdex.search");
    EXPECT_EQ(request->needs[0].fields["query"], "landing page HTML");
    EXPECT_EQ(request->needs[0].fields["limit"], 5);
    EXPECT_EQ(request->needs[1].fields["end_line"], 200);
    EXPECT_EQ(request->needs[2].fields["pattern"], "**/*.html");
    EXPECT_EQ(request->summary, "Need root page HTML to finish plan");
    EXPECT_EQ(request->constraints, std::vector<std::string>{"Only touch HTML"});
    EXPECT_TRUE(request->warnings.empty());
}

TEST(Envelope, RequestsRoundTripInBothForms) {
    auto request = parse_agent_request(kSeedRequest);
    ASSERT_TRUE(request.ok());
    for (auto form : {EnvelopeForm::yaml, EnvelopeForm::json}) {
        const std::string text = render_agent_request(*request, form);
        EXPECT_EQ(text.rfind(form == EnvelopeForm::yaml ? "AGENT_REQUEST v1\n" : "{", 0), 0u)
            << text;
        auto again = parse_agent_request(text);
        ASSERT_TRUE(again.ok()) << again.error().message << "\n" << text;
        EXPECT_EQ(again->role, request->role);
        EXPECT_EQ(again->request_id, request->request_id);
        ASSERT_EQ(again->needs.size(), request->needs.size());
        for (std::size_t i = 0; i < again->needs.size(); ++i) {
            EXPECT_EQ(again->needs[i].type, request->needs[i].type);
            EXPECT_EQ(again->needs[i].fields, request->needs[i].fields);
        }
        EXPECT_EQ(again->summary, request->summary);
        EXPECT_EQ(again->constraints, request->constraints);
        // Written again, it is the same text: nothing is lost or reordered.
        EXPECT_EQ(render_agent_request(*again, form), text);
    }
}

TEST(Envelope, ResponsesRoundTripInBothFormsWithContentKeptExactly) {
    CodaliResponse response;
    response.request_id = "req-7";
    response.repo_root = ".";
    // Content a YAML writer must take care with: a colon, a leading dash, trailing spaces,
    // tabs, quotes, a line that reads as a number, a document marker, no final newline.
    const std::string content =
        "key: value\n- item\ntrailing   \n\tindented\n\"quoted\" 'single'\n42\n---\n...\nlast";
    response.results.push_back({{"type", "file.read"}, {"path", "a.txt"}, {"content", content}});
    response.results.push_back({{"type", "docdex.search"},
                                {"query", "true"},
                                {"hits", ojson::array({{{"path", "007"}, {"line", 3}}})}});
    response.warnings = {"unsupported: docdex.web", "file_not_found: b.txt"};
    response.elapsed_ms = 12;
    for (auto form : {EnvelopeForm::yaml, EnvelopeForm::json}) {
        const std::string text = render_codali_response(response, form);
        auto back = parse_codali_response(text);
        ASSERT_TRUE(back.ok()) << back.error().message << "\n" << text;
        EXPECT_EQ(back->request_id, "req-7");
        EXPECT_EQ(back->results, response.results) << text;
        EXPECT_EQ(back->results[0]["content"], content);
        EXPECT_EQ(back->results[1]["query"], "true");  // still a string, not a bool
        EXPECT_EQ(back->results[1]["hits"][0]["path"], "007");
        EXPECT_EQ(back->warnings, response.warnings);
        EXPECT_EQ(back->repo_root, ".");
        EXPECT_EQ(back->elapsed_ms, 12);
    }
    // The YAML form reads as the seed shows it.
    const std::string yaml = render_codali_response(response, EnvelopeForm::yaml);
    EXPECT_EQ(yaml.rfind("CODALI_RESPONSE v1\nrequest_id: req-7\nresults:\n- type: file.read\n", 0),
              0u)
        << yaml;
    EXPECT_NE(yaml.find("meta:\n  repo_root: .\n  warnings:\n  - 'unsupported: docdex.web'\n"),
              std::string::npos)
        << yaml;
}

TEST(Envelope, MultiLineFilesAreLiteralBlocksAModelCanRead) {
    CodaliResponse response;
    response.request_id = "r";
    response.results.push_back(
        {{"type", "file.read"}, {"path", "a.py"}, {"content", "def f():\n    return 1\n"}});
    const std::string yaml = render_codali_response(response, EnvelopeForm::yaml);
    EXPECT_NE(yaml.find("  content: |\n    def f():\n        return 1\n"), std::string::npos)
        << yaml;
}

TEST(Envelope, MalformedRequestsSayWhatToCorrect) {
    auto error = [](const std::string& text) {
        auto r = parse_agent_request(text);
        return r.ok() ? std::string("(parsed)") : r.error().message;
    };
    EXPECT_EQ(error("AGENT_REQUEST v2\nrole: builder\n"),
              "AGENT_REQUEST line 1: \"AGENT_REQUEST v2\" is not read here; the first line must "
              "be \"AGENT_REQUEST v1\"");
    EXPECT_EQ(error("please send me the file"),
              "AGENT_REQUEST line 1: expected \"AGENT_REQUEST v1\" as the first line, or a JSON "
              "object");
    EXPECT_EQ(error("AGENT_REQUEST v1\nrole: boss\nrequest_id: 1\nneeds:\n  - type: file.read\n"),
              "AGENT_REQUEST: role: expected one of librarian, architect, builder, critic, "
              "interpreter");
    EXPECT_EQ(error("AGENT_REQUEST v1\nrole: builder\nneeds:\n  - type: file.read\n"),
              "AGENT_REQUEST: request_id: expected an id of your choosing, such as \"req-1\"");
    EXPECT_EQ(error("AGENT_REQUEST v1\nrole: builder\nrequest_id: a\nneeds: []\n"),
              "AGENT_REQUEST: needs: expected a list of needs, each `- type: …` with its fields");
    EXPECT_EQ(error("AGENT_REQUEST v1\nrole: builder\nrequest_id: a\nneeds:\n  - path: x\n"),
              "AGENT_REQUEST: needs[0]: expected a mapping with a `type`, such as docdex.search");
    // The YAML reader's own complaint names the envelope's line.
    const std::string bad_yaml = error("AGENT_REQUEST v1\nrole: builder\nneeds:\n - a\n  b: c\n");
    EXPECT_EQ(bad_yaml.rfind("AGENT_REQUEST line ", 0), 0u) << bad_yaml;
    EXPECT_EQ(error("AGENT_REQUEST v1\nrole: builder\nrole: critic\n"),
              "AGENT_REQUEST line 3: the key 'role' is given twice");
    EXPECT_EQ(error(R"({"role": "builder"})"),
              "AGENT_REQUEST: expected \"envelope\": \"AGENT_REQUEST v1\" in the JSON object");
    const std::string bad_json = error(R"({"envelope": "AGENT_REQUEST v1", "role": )");
    EXPECT_NE(bad_json.find("not valid JSON"), std::string::npos) << bad_json;
    EXPECT_EQ(error("AGENT_REQUEST v1\nrole: builder\nrequest_id: a\nneeds:\n  - type: x\n"
                    "context:\n  constraints: nope\n"),
              "AGENT_REQUEST: context.constraints: expected a list of strings");
    EXPECT_EQ(error("AGENT_REQUEST v1\n? [role]\n: builder\n"),
              "AGENT_REQUEST line 2: a key must be a plain value, not a list or mapping");
    EXPECT_EQ(error("AGENT_REQUEST v1\nrole: builder\nrequest_id: a\nneeds: &n [1]\n"),
              "AGENT_REQUEST line 4: anchors (&name) are not read here");
}

TEST(Envelope, UnknownFieldsAreWarnedAboutNotRefused) {
    auto r = parse_agent_request(
        "AGENT_REQUEST v1\nrole: critic\nrequest_id: x\npriority: high\nneeds:\n  - type: "
        "file.read\n    path: a\ncontext:\n  mood: curious\n");
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->warnings, (std::vector<std::string>{"unknown field context.mood ignored",
                                                     "unknown field priority ignored"}));
}

TEST(Envelope, FoundAmongProseFencesAndCommands) {
    const std::string reply =
        "I need to see the login code first.\n\n"
        "```yaml\n"
        "AGENT_REQUEST v1\n"
        "role: builder\n"
        "request_id: r1\n"
        "needs:\n"
        "  - type: docdex.search\n"
        "    query: login\n"
        "\n"
        "Not YAML, but inside the fence.\n"
        "```\n"
        "Meanwhile:\n"
        "[CREATE_FILE path=\"notes.md\"]\nx\n[/CREATE_FILE]\n"
        "AGENT_REQUEST v1\n"
        "role: librarian\n"
        "request_id: r2\n"
        "needs:\n"
        "  - type: file.read\n"
        "    path: a.py\n"
        "That is all for now.\n"
        "{\"envelope\": \"AGENT_REQUEST v1\", \"role\": \"critic\", \"request_id\": \"r3\",\n"
        " \"needs\": [{\"type\": \"docdex.tree\", \"maxDepth\": 1, \"note\": \"a } in a "
        "string\"}]}\n"
        "{\"unrelated\": true}\n";
    const auto found = find_agent_requests(reply);
    ASSERT_EQ(found.size(), 3u);
    EXPECT_EQ(found[0].form, EnvelopeForm::yaml);
    EXPECT_EQ(found[0].line, 4u);
    EXPECT_EQ(found[1].form, EnvelopeForm::yaml);
    EXPECT_EQ(found[1].text,
              "AGENT_REQUEST v1\nrole: librarian\nrequest_id: r2\nneeds:\n  - type: file.read\n"
              "    path: a.py\n");
    EXPECT_EQ(reply.substr(found[1].end, 20), "That is all for now.");
    EXPECT_EQ(found[2].form, EnvelopeForm::json);
    EXPECT_EQ(reply.substr(found[2].begin, 12), "{\"envelope\":");
    // The fenced one's prose inside the fence makes it malformed; the others read.
    EXPECT_FALSE(parse_agent_request(found[0].text).ok());
    auto second = parse_agent_request(found[1].text);
    ASSERT_TRUE(second.ok()) << second.error().message;
    EXPECT_EQ(second->request_id, "r2");
    auto third = parse_agent_request(found[2].text);
    ASSERT_TRUE(third.ok()) << third.error().message;
    EXPECT_EQ(third->needs[0].fields["note"], "a } in a string");
    EXPECT_TRUE(find_agent_requests("no envelope here\n[DONE]\nok\n[/DONE]\n").empty());
}

TEST(Envelope, UnclosedBracesBeforeAJsonRequestDoNotHideIt) {
    // Lines opening with a brace that never closes (a half-written JSON file, say) cost one
    // scan each; the request after them is still found.
    std::string reply;
    for (int i = 0; i < 20; ++i) reply += "{ \"unclosed\": [\n";
    reply +=
        "{\"envelope\": \"AGENT_REQUEST v1\", \"role\": \"builder\", \"request_id\": \"x\", "
        "\"needs\": [{\"type\": \"docdex.tree\"}]}\n";
    const auto found = find_agent_requests(reply);
    ASSERT_FALSE(found.empty());
    EXPECT_TRUE(parse_agent_request(found.back().text).ok()) << found.back().text;
}

TEST(Envelope, TheCriticResultIsTheSeeds) {
    CriticResult critic{false,
                        {"scope: outside the allowed paths: notes.txt"},
                        {"Address: scope: outside the allowed paths: notes.txt"},
                        {"add.sh", "notes.txt"},
                        {"add.sh"}};
    CodaliResponse response;
    response.request_id = "critic-1";
    response.results.push_back(critic_result_json(critic));
    response.warnings = {"critic_failed"};
    const std::string yaml = render_codali_response(response, EnvelopeForm::yaml);
    EXPECT_EQ(yaml,
              "CODALI_RESPONSE v1\n"
              "request_id: critic-1\n"
              "results:\n"
              "- type: critic.result\n"
              "  status: FAIL\n"
              "  reasons:\n"
              "  - 'scope: outside the allowed paths: notes.txt'\n"
              "  suggested_fixes:\n"
              "  - 'Address: scope: outside the allowed paths: notes.txt'\n"
              "  touched_files:\n"
              "  - add.sh\n"
              "  - notes.txt\n"
              "  plan_targets:\n"
              "  - add.sh\n"
              "meta:\n"
              "  warnings:\n"
              "  - critic_failed\n");
}

TEST(YamlJson, PlainScalarsResolveAsYamlCoreSchemaAndQuotedStayStrings) {
    auto v = yaml_to_json(
        "a: 1\nb: -2\nc: 1.5e3\nd: true\ne: ~\nf: '1'\ng: \"true\"\nh: 0x10\n"
        "i: 99999999999999999999999\nj: .inf\nk: !!str 12\n",
        "t");
    ASSERT_TRUE(v.ok()) << v.error().message;
    EXPECT_EQ((*v)["a"], 1);
    EXPECT_EQ((*v)["b"], -2);
    EXPECT_EQ((*v)["c"], 1500.0);
    EXPECT_EQ((*v)["d"], true);
    EXPECT_TRUE((*v)["e"].is_null());
    EXPECT_EQ((*v)["f"], "1");
    EXPECT_EQ((*v)["g"], "true");
    EXPECT_EQ((*v)["h"], "0x10");
    EXPECT_EQ((*v)["i"], "99999999999999999999999");
    EXPECT_TRUE((*v)["j"].is_number_float());
    EXPECT_EQ((*v)["k"], "12");
    // What could read as something else is written quoted, and comes back the same.
    const ojson tricky = {{"n", "1"},
                          {"b", "false"},
                          {"z", "null"},
                          {"e", ""},
                          {"s", "- x"},
                          {"bad", std::string("a\xff"
                                              "b")}};
    auto back = yaml_to_json(json_to_yaml(tricky), "t");
    ASSERT_TRUE(back.ok()) << json_to_yaml(tricky);
    EXPECT_EQ((*back)["n"], "1");
    EXPECT_EQ((*back)["b"], "false");
    EXPECT_EQ((*back)["z"], "null");
    EXPECT_EQ((*back)["e"], "");
    EXPECT_EQ((*back)["s"], "- x");
    EXPECT_EQ((*back)["bad"],
              "a\xEF\xBF\xBD"
              "b");  // not UTF-8: replaced, never refused
}

}  // namespace
}  // namespace cocode::test
