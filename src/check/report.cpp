#include "check/report.h"

#include <algorithm>
#include <cstdio>

#include "core/markdown.h"

namespace cocode::check {

namespace {

std::string icon(Outcome outcome) {
    switch (outcome) {
        case Outcome::pass:
            return "✅";
        case Outcome::fail:
            return "❌";
        case Outcome::skipped:
            return "➖";
    }
    return "";
}

// The files the scope check found outside the allowed paths (or an approved plan's files).
std::size_t out_of_scope(const Verdict& v) {
    const CheckItem* scope = v.find("scope");
    return scope ? scope->files.size() : 0;
}

std::string tests_cell(const Verdict& v) {
    int passed = 0, ran = 0, total = 0;
    for (const auto& c : v.checks) {
        if (c.id != "verify") continue;
        ++total;
        if (c.outcome == Outcome::skipped) continue;
        ++ran;
        if (c.outcome == Outcome::pass) ++passed;
    }
    if (total == 0) return "–";
    if (ran == 0) return "not run";
    return std::to_string(passed) + "/" + std::to_string(total) + " passed";
}

}  // namespace

std::string plural(std::size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string format_seconds(double seconds) {
    long total = static_cast<long>(seconds + 0.5);
    if (total < 60) return std::to_string(total) + "s";
    long h = total / 3600, m = (total % 3600) / 60, s = total % 60;
    if (h > 0) return std::to_string(h) + "h " + std::to_string(m) + "m";
    return std::to_string(m) + "m " + std::to_string(s) + "s";
}

std::string comment_key(long issue, const std::string& agent) {
    return "check/issue-" + std::to_string(issue) + "/" + agent;
}
std::string summary_key(long issue) { return "check/issue-" + std::to_string(issue) + "/summary"; }

// A verdict's cost for a table: "$1.84", the tokens where dollars are not known, or "–".
std::string cost_cell(const Verdict& v) {
    if (!v.usage || v.usage->empty()) return "–";
    if (v.usage->cost_usd) return run::format_cost(v.usage->cost_usd);
    return run::format_tokens(v.usage->tokens);
}

std::string usage_line(const Verdict& v) {
    if (!v.usage || v.usage->empty()) return {};
    return run::usage_summary(*v.usage) +
           (v.run_seconds ? " · " + format_seconds(*v.run_seconds) : "");
}

namespace {

// How much of an unreadable plan a comment shows (GitHub takes 65536 characters a comment).
constexpr std::size_t kShownAnswer = 16 << 10;

std::string plan_rules_section(const run::SealedPlan& plan) {
    std::string out = "\n**Rules from the approved plan** " + markdown_code(plan.hash) + " (" +
                      markdown_text(plan.approved_by) + "): files ";
    for (std::size_t i = 0; i < plan.files.size(); ++i)
        out += (i ? ", " : "") + markdown_code(plan.files[i]);
    out += " (within the configured allowed paths)";
    if (!plan.verify.empty()) {
        out += "; verify ";
        for (std::size_t i = 0; i < plan.verify.size(); ++i)
            out += (i ? ", " : "") + markdown_code(plan.verify[i]);
    }
    out += ".\n";
    for (const auto& left : plan.left_out)
        out += "- left out of verify: " + markdown_code(left) + "\n";
    return out;
}

}  // namespace

std::string render_markdown(const Verdict& v) {
    if (v.plan_round) return render_plan_markdown(v);
    std::string out = "### " + std::string(v.pass ? "✅ PASS" : "❌ FAIL") + " · cocode check";
    if (!v.agent.empty()) out += " · " + markdown_code(v.agent);
    if (v.issue) out += " on #" + std::to_string(v.issue);
    out += "\n\n";

    std::vector<std::string> facts;
    if (!v.branch.empty()) facts.push_back(markdown_code(v.branch));
    facts.push_back(plural(v.commits.size(), "commit", "commits") + " since " +
                    markdown_code(v.base.substr(0, 7)));
    facts.push_back(plural(v.files.size(), "file", "files") + " +" + std::to_string(v.insertions) +
                    " −" + std::to_string(v.deletions));
    if (v.run_seconds) facts.push_back("run " + format_seconds(*v.run_seconds));
    for (std::size_t i = 0; i < facts.size(); ++i) out += (i ? " · " : "") + facts[i];
    out += "\n\n";
    // The comment for (issue, agent) stays one comment: each round adds its line.
    for (const auto& r : v.rounds) {
        const char* verdict = !r.pass   ? "not judged"
                              : r.plan  ? (*r.pass ? "plan" : "no plan")
                              : *r.pass ? "PASS"
                                        : "FAIL";
        out += "- round " + std::to_string(r.number) + " · " + markdown_text(r.trigger) + " · " +
               verdict + " · " + markdown_code(r.from.substr(0, 7) + ".." + r.to.substr(0, 7)) +
               "\n";
    }
    if (!v.rounds.empty()) out += "\n";
    out += "| | check | result |\n|---|---|---|\n";
    for (const auto& c : v.checks)
        out += "| " + icon(c.outcome) + " | " + markdown_text(c.name) + " | " +
               markdown_text(c.reason) + " |\n";

    for (const auto& c : v.checks) {
        if (c.outcome != Outcome::fail || c.output_tail.empty()) continue;
        out += "\n<details><summary>" + html_text(c.name) + ": last lines</summary>\n\n" +
               fenced(c.output_tail) + "\n</details>\n";
    }
    if (v.plan_rules) out += plan_rules_section(*v.plan_rules);
    // What the agent's proxy blocked, with the commands that tried (docs/security.md).
    if (const CheckItem* network = v.find("network"); network && !network->files.empty()) {
        out += "\n**Blocked by the network allowlist:**\n\n";
        for (const auto& line : network->files) out += "- " + markdown_code(line) + "\n";
    }
    if (!v.files.empty()) {
        out += "\n<details><summary>" + plural(v.files.size(), "file", "files") +
               " changed</summary>\n\n| file | + | − |\n|---|---:|---:|\n";
        const std::size_t shown = std::min<std::size_t>(v.files.size(), 50);
        for (std::size_t i = 0; i < shown; ++i) {
            const auto& f = v.files[i];
            std::string name = markdown_code(f.path, true);
            if (f.status == 'R') name = markdown_code(f.old_path, true) + " → " + name;
            if (f.status == 'A') name += " (new)";
            if (f.status == 'D') name += " (deleted)";
            out += "| " + name + " | " + (f.binary ? "bin" : std::to_string(f.insertions)) + " | " +
                   (f.binary ? "bin" : std::to_string(f.deletions)) + " |\n";
        }
        if (v.files.size() > shown)
            out += "| … and " + std::to_string(v.files.size() - shown) + " more | | |\n";
        out += "\n</details>\n";
    }
    if (auto line = usage_line(v); !line.empty())
        out += "\n<sub>" + markdown_text(line) + "</sub>\n";
    return out;
}

std::string approve_command(const Verdict& v) {
    if (!v.plan_round || !v.plan || !v.pass || !v.plan_rejected_by.empty()) return {};
    return "cocode-dispatch continue " + std::to_string(v.issue) + " --agent " + v.agent +
           " --approve --hash " + v.plan->hash;
}

std::string render_plan_markdown(const Verdict& v, const std::string& command) {
    std::string out = "### " + std::string(v.pass ? "📝 PLAN" : "❌ NO PLAN") + " · cocode plan";
    if (!v.agent.empty()) out += " · " + markdown_code(v.agent);
    if (v.issue) out += " on #" + std::to_string(v.issue);
    if (v.plan) out += " · " + markdown_code(v.plan->hash);
    out += "\n\n";
    if (v.plan) {
        const WorkPlan& plan = *v.plan;
        if (!plan.questions.empty()) {
            out += "**Questions** — answer them in a comment ending with " +
                   markdown_code(command + " revise") + ":\n\n";
            for (const auto& q : plan.questions) out += "- " + markdown_text(q) + "\n";
            out += "\n";
        }
        out += "**Files** — the code round may touch only these:\n\n";
        for (const auto& f : plan.files) out += "- " + markdown_code(f) + "\n";
        if (!plan.tests.empty()) {
            out += "\n**Tests**:\n\n";
            for (const auto& t : plan.tests) out += "- " + markdown_code(t) + "\n";
        }
        out += "\n**Steps**:\n\n";
        for (std::size_t i = 0; i < plan.steps.size(); ++i)
            out += std::to_string(i + 1) + ". " + markdown_text(plan.steps[i]) + "\n";
    } else {
        out += "The answer could not be read as a plan: " + markdown_text(v.plan_why_not) +
               ". As written" + (v.plan_text.size() > kShownAnswer ? " (its end)" : "") + ":\n\n" +
               fenced(v.plan_text.empty()
                          ? "(nothing)"
                          : v.plan_text.substr(v.plan_text.size() -
                                               std::min(v.plan_text.size(), kShownAnswer)));
    }
    out += "\n| | check | result |\n|---|---|---|\n";
    for (const auto& c : v.checks)
        out += "| " + icon(c.outcome) + " | " + markdown_text(c.name) + " | " +
               markdown_text(c.reason) + " |\n";
    out += "\n";
    if (!v.plan_rejected_by.empty())
        out += "**Rejected** (" + markdown_text(v.plan_rejected_by) +
               "): no code round starts. Write what to change followed by " +
               markdown_code(command + " revise") + " for a new plan.\n";
    else if (v.plan && v.pass)
        out += "A person with write access answers " +
               markdown_code(command + " approve " + v.agent + " " + v.plan->hash) +
               " (the code round starts, held to these files), or writes what to change "
               "followed by " +
               markdown_code(command + " revise") + ", or " + markdown_code(command + " reject") +
               ".\n";
    else
        out += "Nothing to approve: write what to change followed by " +
               markdown_code(command + " revise") + " for another plan, or " +
               markdown_code(command + " reject") + ".\n";
    if (auto line = usage_line(v); !line.empty())
        out += "\n<sub>" + markdown_text(line) + "</sub>\n";
    return out;
}

namespace {

// A plan round in the terminal: its lists, and how to go on.
std::string plan_text_section(const Verdict& v) {
    if (!v.plan) return "\nno plan: " + v.plan_why_not + "\n";
    std::string out;
    auto list = [&](const char* title, const std::vector<std::string>& items) {
        if (items.empty()) return;
        out += std::string("\n") + title + ":\n";
        for (const auto& item : items) out += "  - " + item + "\n";
    };
    list("Questions", v.plan->questions);
    list("Files", v.plan->files);
    list("Tests", v.plan->tests);
    list("Steps", v.plan->steps);
    if (const std::string approve = approve_command(v); !approve.empty())
        out += "\nplan " + v.plan->hash + ": " + approve + " (or --revise -m TEXT, --reject)\n";
    else if (!v.plan_rejected_by.empty())
        out += "\nplan " + v.plan->hash + ": rejected (" + v.plan_rejected_by + ")\n";
    return out;
}

}  // namespace

std::string render_text(const Verdict& v) {
    std::string out = std::string(v.plan_round ? (v.pass ? "PLAN" : "FAIL")
                                  : v.pass     ? "PASS"
                                               : "FAIL") +
                      (v.plan_round ? "  cocode plan" : "  cocode check");
    if (!v.agent.empty()) out += " · " + v.agent;
    if (v.issue) out += " on #" + std::to_string(v.issue);
    out += "\n";
    std::vector<std::string> facts;
    if (!v.branch.empty()) facts.push_back(v.branch);
    facts.push_back(plural(v.commits.size(), "commit", "commits") + " since " +
                    v.base.substr(0, 7));
    facts.push_back(plural(v.files.size(), "file", "files") + " +" + std::to_string(v.insertions) +
                    " -" + std::to_string(v.deletions));
    if (v.run_seconds) facts.push_back("run " + format_seconds(*v.run_seconds));
    for (std::size_t i = 0; i < facts.size(); ++i) out += (i ? " · " : "") + facts[i];
    out += "\n\n";

    std::size_t width = 0;
    for (const auto& c : v.checks) width = std::max(width, c.name.size());
    for (const auto& c : v.checks) {
        const char* mark = c.outcome == Outcome::pass   ? "ok  "
                           : c.outcome == Outcome::fail ? "FAIL"
                                                        : "skip";
        out += "  " + std::string(mark) + "  " + c.name + std::string(width - c.name.size(), ' ') +
               "  " + c.reason + "\n";
        for (const auto& file : c.files) out += "        " + std::string(width, ' ') + file + "\n";
    }
    if (v.plan_round) return out + plan_text_section(v);
    for (const auto& c : v.checks) {
        if (c.outcome != Outcome::fail || c.output_tail.empty()) continue;
        out += "\n" + c.name + ", last lines:\n";
        std::size_t at = 0;
        while (at < c.output_tail.size()) {
            const std::size_t end = std::min(c.output_tail.find('\n', at), c.output_tail.size());
            out += "    " + c.output_tail.substr(at, end - at) + "\n";
            at = end + 1;
        }
    }
    if (!v.files.empty()) {
        out += "\n" + plural(v.files.size(), "file", "files") + " changed:\n";
        const std::size_t shown = std::min<std::size_t>(v.files.size(), 50);
        for (std::size_t i = 0; i < shown; ++i) {
            const auto& f = v.files[i];
            char stat[32];
            if (f.binary)
                std::snprintf(stat, sizeof stat, "%11s", "binary");
            else
                std::snprintf(stat, sizeof stat, "+%-5d -%-4d", f.insertions, f.deletions);
            std::string name = f.status == 'R' ? f.old_path + " -> " + f.path : f.path;
            if (f.status == 'A') name += " (new)";
            if (f.status == 'D') name += " (deleted)";
            out += "  " + std::string(stat) + " " + name + "\n";
        }
        if (v.files.size() > shown)
            out += "  … and " + std::to_string(v.files.size() - shown) + " more\n";
    }
    if (auto line = usage_line(v); !line.empty()) out += "\n" + line + "\n";
    return out;
}

RankFacts rank_facts(const Verdict& v) {
    return {v.pass, out_of_scope(v), v.insertions + v.deletions, v.run_seconds, v.agent};
}

bool ranks_before(const RankFacts& a, const RankFacts& b) {
    if (a.pass != b.pass) return a.pass;
    if (a.outside != b.outside) return a.outside < b.outside;
    if (a.lines != b.lines) return a.lines < b.lines;
    const double time_a = a.seconds.value_or(1e18), time_b = b.seconds.value_or(1e18);
    if (time_a != time_b) return time_a < time_b;
    return a.agent < b.agent;
}

std::vector<Verdict> rank(std::vector<Verdict> verdicts) {
    std::stable_sort(verdicts.begin(), verdicts.end(), [](const Verdict& a, const Verdict& b) {
        return ranks_before(rank_facts(a), rank_facts(b));
    });
    return verdicts;
}

namespace {

constexpr std::size_t kRecordListCap = 300;
constexpr std::string_view kRecordStart = "<!-- cocode:verdict ";
constexpr std::string_view kContinueStart = "<!-- cocode:continue ";

std::size_t file_count(const Verdict& v) { return std::max(v.files.size(), v.files_total); }

}  // namespace

// `start` and JSON text as an HTML comment: "--" can only be inside a JSON string, where it is
// written "-\u002d", which reads back as "--"; so nothing can end the comment early.
std::string hidden_record(std::string_view start, const std::string& text) {
    std::string out(start);
    for (std::size_t i = 0; i < text.size(); ++i) {
        out += text[i];
        if (text[i] == '-' && i + 1 < text.size() && text[i + 1] == '-') {
            out += "\\u002d";
            ++i;
        }
    }
    return out + " -->";
}

// The JSON object of the record `start` opens in `body`, if it has one. cocode appends its
// records after everything else a comment shows, some of which an agent wrote (a plan, file
// names, commit summaries): only the last record of its kind is cocode's.
std::optional<nlohmann::json> record_in(const std::string& body, std::string_view start) {
    const std::size_t at = body.rfind(start);
    if (at == std::string::npos) return std::nullopt;
    const std::size_t stop = body.find(" -->", at + start.size());
    if (stop == std::string::npos) return std::nullopt;
    auto parsed = nlohmann::json::parse(body.substr(at + start.size(), stop - at - start.size()),
                                        nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) return std::nullopt;
    return parsed;
}

std::string verdict_record(const Verdict& v) {
    nlohmann::json j = to_json(v);
    j.erase("commits");
    j.erase("report_dir");
    if (j.contains("files") && j["files"].size() > kRecordListCap) {
        j["files_total"] = j["files"].size();
        j["files"].erase(j["files"].begin() + kRecordListCap, j["files"].end());
    }
    for (auto& c : j["checks"])
        if (c.contains("files") && c["files"].size() > kRecordListCap) {
            c["files_total"] = c["files"].size();
            c["files"].erase(c["files"].begin() + kRecordListCap, c["files"].end());
        }
    // A plan read needs no answer beside it; one that could not be read keeps its last 4 KiB
    // (the comment shows more).
    if (j.contains("plan_round")) {
        std::string text = j["plan_round"]["text"].get<std::string>();
        if (v.plan) text.clear();
        if (text.size() > 4096) text.erase(0, text.size() - 4096);
        j["plan_round"]["text"] = text;
    }
    return hidden_record(kRecordStart,
                         j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::string continuation_record(const Continuation& c) {
    std::string output = c.output;
    if (output.size() > kContinuationOutputCap)
        output.erase(0, output.size() - kContinuationOutputCap);
    const nlohmann::json j = {{"seal", nlohmann::json::parse(run::seal_text(c.seal))},
                              {"output", output}};
    return hidden_record(kContinueStart,
                         j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::optional<Published> published_pair(const std::vector<github::Comment>& comments, long issue,
                                        const std::string& agent) {
    const std::string marker = github::comment_marker(comment_key(issue, agent));
    for (const auto& comment : comments) {
        if (comment.body.rfind(marker, 0) != 0) continue;
        // The oldest is the one publishing keeps; anyone else's is not read.
        const auto& a = comment.author_association;
        if (!comment.author_is_bot && a != "OWNER" && a != "MEMBER" && a != "COLLABORATOR")
            return std::nullopt;
        const auto verdict = record_in(comment.body, kRecordStart);
        const auto continuation = record_in(comment.body, kContinueStart);
        if (!verdict || !continuation || !continuation->contains("seal")) return std::nullopt;
        Published out;
        out.verdict = verdict_from_json(*verdict);
        if (out.verdict.agent != agent || out.verdict.issue != issue) return std::nullopt;
        auto seal = run::parse_seal((*continuation)["seal"].dump(), "the published comment",
                                    out.verdict.run_id);
        if (!seal) return std::nullopt;
        out.continuation.seal = std::move(*seal);
        if ((*continuation).contains("output") && (*continuation)["output"].is_string())
            out.continuation.output = (*continuation)["output"].get<std::string>();
        return out;
    }
    return std::nullopt;
}

std::vector<Verdict> verdicts_from_comments(const std::vector<github::Comment>& comments,
                                            long issue) {
    std::vector<Verdict> out;
    for (const auto& comment : comments) {
        const std::string& body = comment.body;
        // Whose comment is it: the marker names the agent.
        const std::string open = "<!-- cocode:check/issue-" + std::to_string(issue) + "/";
        if (body.rfind(open, 0) != 0) continue;
        const std::size_t end = body.find(" -->", open.size());
        if (end == std::string::npos) continue;
        const std::string agent = body.substr(open.size(), end - open.size());
        if (agent == "summary" ||
            std::any_of(out.begin(), out.end(), [&](const Verdict& v) { return v.agent == agent; }))
            continue;  // an older comment of this agent was read already
        const auto parsed = record_in(body, kRecordStart);
        if (!parsed) continue;
        Verdict v = verdict_from_json(*parsed);
        if (v.agent != agent || v.issue != issue) continue;  // a record copied into another comment
        out.push_back(std::move(v));
    }
    return out;
}

std::string render_summary(long issue, const std::vector<Verdict>& ranked) {
    std::string out = "### cocode · " + plural(ranked.size(), "agent", "agents") + " on #" +
                      std::to_string(issue);
    const bool any_pass = !ranked.empty() && ranked.front().pass;
    out += any_pass ? " · best: " + markdown_code(ranked.front().agent) : " · none passed";
    out +=
        "\n\n| agent | verdict | files | lines | out of scope | tests | run time | cost |\n"
        "|---|---|---:|---:|---:|---|---:|---:|\n";
    double spent = 0;
    int passes = 0;
    bool all_known = true;
    for (std::size_t i = 0; i < ranked.size(); ++i) {
        const Verdict& v = ranked[i];
        std::string name = markdown_code(v.agent.empty() ? "?" : v.agent, true);
        if (i == 0 && any_pass) name = "**" + name + "** ⭐";
        out += "| " + name + " | " + (v.pass ? "✅ PASS" : "❌ FAIL") + " | " +
               std::to_string(file_count(v)) + " | +" + std::to_string(v.insertions) + " −" +
               std::to_string(v.deletions) + " | " + std::to_string(out_of_scope(v)) + " | " +
               tests_cell(v) + " | " + (v.run_seconds ? format_seconds(*v.run_seconds) : "–") +
               " | " + cost_cell(v) + " |\n";
        passes += v.pass;
        if (v.usage && v.usage->cost_usd)
            spent += *v.usage->cost_usd;
        else
            all_known = false;
    }
    // What the race cost, and what each PASS cost: the figure agents are chosen by.
    if (all_known && !ranked.empty()) {
        out += "\nCost: " + run::format_cost(spent) + " in all";
        out +=
            passes ? ", " + run::format_cost(spent / passes) + " per PASS.\n" : ", and no PASS.\n";
    }
    out +=
        "\nBest candidate: PASS first, then fewer files outside the allowed paths, then the "
        "smaller diff, then the faster run.\n";
    return out;
}

}  // namespace cocode::check
