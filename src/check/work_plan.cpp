#include "check/work_plan.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/glob.h"
#include "core/json_text.h"
#include "core/markdown.h"
#include "core/sha256.h"
#include "core/visible_text.h"

namespace cocode::check {
namespace {

enum class Section { none, questions, files, tests, steps, other };

std::string trimmed(std::string_view text) {
    const auto start = text.find_first_not_of(" \t\r");
    if (start == std::string_view::npos) return {};
    const auto end = text.find_last_not_of(" \t\r");
    return std::string(text.substr(start, end - start + 1));
}

std::string lowered(std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

// A heading line (`## Files`, `**Files:**`, `Files:`) and the section it opens.
std::optional<Section> heading(const std::string& line) {
    std::string name = line;
    bool marked = false;
    if (!name.empty() && name[0] == '#') {
        name.erase(0, name.find_first_not_of('#'));
        marked = true;
    }
    name = trimmed(name);
    while (name.size() >= 2 && name.front() == '*' && name.back() == '*') {
        name = name.substr(1, name.size() - 2);
        marked = true;
    }
    if (!name.empty() && name.back() == ':') {
        name.pop_back();
        marked = true;
    }
    if (!marked) return std::nullopt;
    name = lowered(trimmed(name));
    if (name == "questions" || name == "open questions") return Section::questions;
    if (name == "files" || name == "files to touch") return Section::files;
    if (name == "tests" || name == "verify" || name == "tests or verify commands")
        return Section::tests;
    if (name == "steps") return Section::steps;
    return line[0] == '#' ? std::optional<Section>(Section::other) : std::nullopt;
}

// The text of a list item (`- x`, `* x`, `+ x`, `1. x`, `1) x`), or nullopt.
std::optional<std::string> list_item(const std::string& line) {
    const std::string text = trimmed(line);
    if (text.size() >= 2 && (text[0] == '-' || text[0] == '*' || text[0] == '+') && text[1] == ' ')
        return trimmed(text.substr(2));
    std::size_t digits = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
    if (digits > 0 && digits + 1 < text.size() && (text[digits] == '.' || text[digits] == ')') &&
        text[digits + 1] == ' ')
        return trimmed(text.substr(digits + 2));
    return std::nullopt;
}

// A path or a command as an item gives it: the first `code span` when there is one, else the
// whole item (a file: its first word).
std::string code_of(const std::string& item, bool first_word) {
    const auto open = item.find('`');
    if (open != std::string::npos) {
        const auto close = item.find('`', open + 1);
        if (close != std::string::npos) return trimmed(item.substr(open + 1, close - open - 1));
    }
    if (!first_word) return item;
    return item.substr(0, item.find_first_of(" \t"));
}

bool none_word(const std::string& item) {
    const std::string word = lowered(item);
    return word == "none" || word == "(none)" || word == "none." || word == "n/a" || word == "-";
}

std::string plan_hash(const WorkPlan& plan) {
    const std::string text = json_dump(nlohmann::json{
        {"questions", plan.questions},
        {"files", plan.files},
        {"tests", plan.tests},
        {"steps", plan.steps}});  // a model's bytes: invalid UTF-8 is replaced, never thrown
    return sha256_hex(text).substr(0, 12);
}

bool any_match(const std::vector<std::string>& globs, const std::string& path) {
    return std::any_of(globs.begin(), globs.end(),
                       [&](const std::string& glob) { return glob_match(glob, path); });
}

std::string bullets(const std::vector<std::string>& items, bool code) {
    std::string out;
    for (const auto& item : items) out += code ? "- `" + item + "`\n" : "- " + item + "\n";
    return out;
}

}  // namespace

PlanRead read_work_plan(std::string_view text) {
    WorkPlan plan;
    std::vector<Section> seen;
    Section section = Section::none;
    std::vector<std::string>* items = nullptr;
    std::istringstream in{visible_text(text).text};
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        const std::string bare = trimmed(line);
        // A plan wrapped in a fence (as CLIs often answer) reads as the plan inside it.
        if (bare.rfind("```", 0) == 0 || bare.rfind("~~~", 0) == 0) continue;
        if (auto opened = heading(bare)) {
            section = *opened;
            // Only a section's first occurrence counts: a second "Files" cannot widen the first.
            if (std::find(seen.begin(), seen.end(), section) != seen.end())
                section = Section::other;
            seen.push_back(section);
            items = section == Section::questions ? &plan.questions
                    : section == Section::files   ? &plan.files
                    : section == Section::tests   ? &plan.tests
                    : section == Section::steps   ? &plan.steps
                                                  : nullptr;
            continue;
        }
        if (!items) continue;
        if (auto item = list_item(line)) {
            if (item->empty() || none_word(*item)) continue;
            std::string said = section == Section::files   ? code_of(*item, true)
                               : section == Section::tests ? code_of(*item, false)
                                                           : *item;
            if (!said.empty()) items->push_back(std::move(said));
        } else if (!bare.empty() && !items->empty() && line[0] == ' ' &&
                   (section == Section::steps || section == Section::questions)) {
            items->back() += " " + bare;  // an item's next line
        }
    }
    PlanRead read;
    if (plan.files.empty()) {
        read.why_not = "no files: a plan names the files it will touch under a \"Files\" heading";
        return read;
    }
    for (const auto& file : plan.files) {
        std::string path = file;
        if (path.front() == '/' || path.find(":") != std::string::npos)
            read.why_not = "file '" + file + "' is not a path inside the repository";
        else if (auto problem = glob_problem(path))
            read.why_not = "file '" + file + "': " + *problem;
        if (!read.why_not.empty()) return read;
    }
    if (plan.steps.empty()) {
        read.why_not = "no steps: a plan says what it will do under a \"Steps\" heading";
        return read;
    }
    plan.hash = plan_hash(plan);
    read.plan = std::move(plan);
    return read;
}

BoundVerify bind_verify(const std::vector<std::string>& tests,
                        const std::vector<std::string>& prefixes) {
    BoundVerify out;
    for (const auto& command : tests) {
        if (command.find_first_of(";|&$`<>\n\\") != std::string::npos) {
            out.left_out.push_back(command + " (shell control characters)");
            continue;
        }
        const bool allowed = std::any_of(prefixes.begin(), prefixes.end(), [&](const auto& p) {
            const std::string prefix = trimmed(p);
            return !prefix.empty() && command.compare(0, prefix.size(), prefix) == 0 &&
                   (command.size() == prefix.size() || command[prefix.size()] == ' ');
        });
        if (allowed)
            out.kept.push_back(command);
        else
            out.left_out.push_back(command + " (starts with no prefix plan.bind_verify allows)");
    }
    return out;
}

run::SealedPlan seal_plan(const WorkPlan& plan, const std::vector<std::string>& prefixes,
                          const std::string& approved_by) {
    auto bound = bind_verify(plan.tests, prefixes);
    return {plan.hash, plan.files, std::move(bound.kept), std::move(bound.left_out), approved_by};
}

CheckItem plan_scope_check(const run::SealedPlan& plan, const std::vector<git::FileChange>& files) {
    CheckItem item;
    item.id = "plan";
    item.name = "approved plan";
    for (const auto& file : files)
        for (const std::string* path : {&file.old_path, &file.path}) {
            if (path == &file.old_path && file.old_path == file.path) continue;
            if (!any_match(plan.files, *path)) item.files.push_back(*path);
        }
    if (item.files.empty()) {
        item.outcome = Outcome::pass;
        item.reason = "every file within plan " + plan.hash + "'s files";
        return item;
    }
    item.outcome = Outcome::fail;
    std::string list;
    for (std::size_t i = 0; i < item.files.size() && i < 5; ++i)
        list += (i ? ", " : "") + item.files[i];
    if (item.files.size() > 5) list += ", … (" + std::to_string(item.files.size()) + " in all)";
    item.reason = "outside the approved plan " + plan.hash + ": " + list;
    return item;
}

std::string approved_plan_feedback(const WorkPlan& plan, const std::string& approved_by) {
    std::string text = "## Questions\n" + bullets(plan.questions, false) + "## Files\n" +
                       bullets(plan.files, true) + "## Tests\n" + bullets(plan.tests, true) +
                       "## Steps\n";
    for (std::size_t i = 0; i < plan.steps.size(); ++i)
        text += std::to_string(i + 1) + ". " + plan.steps[i] + "\n";
    return "Your plan " + plan.hash + " was approved (" + approved_by +
           "). Carry it out now: write the code and tests, commit, and end with the marker. "
           "Your change is judged against this plan: a file outside its Files fails the "
           "check.\n\n" +
           fenced(text, "markdown");
}

std::string_view plan_verb_name(PlanVerb verb) {
    switch (verb) {
        case PlanVerb::none:
            return "";
        case PlanVerb::plan:
            return "plan";
        case PlanVerb::approve:
            return "approve";
        case PlanVerb::revise:
            return "revise";
        case PlanVerb::reject:
            return "reject";
    }
    return "";
}

std::optional<PlanVerb> parse_plan_verb(std::string_view name) {
    for (PlanVerb verb : {PlanVerb::plan, PlanVerb::approve, PlanVerb::revise, PlanVerb::reject})
        if (name == plan_verb_name(verb)) return verb;
    return std::nullopt;
}

PlanDecision decide_plan_verb(PlanVerb verb, const std::optional<std::string>& hash,
                              const PlanState& state) {
    PlanDecision d;
    const std::string round = "round " + std::to_string(state.round);
    if (!state.any_round) {
        d.why_not = "there is no plan: no round has run";
    } else if (!state.plan_round) {
        d.why_not = "there is no plan to " + std::string(plan_verb_name(verb)) +
                    ": the newest round (" + round +
                    ") writes code; ask for changes on its pull "
                    "request";
    } else if (verb == PlanVerb::revise) {
        d.go = true;
    } else if (!state.verdict) {
        d.why_not = "the plan of " + round + " is not judged yet";
    } else if (!state.verdict->plan_rejected_by.empty()) {
        d.why_not = "the plan of " + round + " was rejected (" + state.verdict->plan_rejected_by +
                    "); revise it for a new one";
    } else if (verb == PlanVerb::reject) {
        d.go = true;
    } else if (!state.verdict->plan || !state.verdict->pass) {
        d.why_not = round + " has no plan to approve" +
                    (state.verdict->plan_why_not.empty() ? std::string(" (its check failed)")
                                                         : ": " + state.verdict->plan_why_not);
    } else if (hash && *hash != state.verdict->plan->hash) {
        d.why_not = "plan " + *hash + " is not the current plan (" + state.verdict->plan->hash +
                    "): it changed since; approve the one shown now";
    } else {
        d.go = true;
    }
    return d;
}

}  // namespace cocode::check
