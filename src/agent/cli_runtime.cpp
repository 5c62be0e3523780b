#include "agent/cli_runtime.h"

#include <array>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "core/files.h"

namespace cocode::agent {
namespace fs = std::filesystem;

namespace {

// A version as a range names it: up to three numbers, `given` of them written (20.x gives 1).
struct Partial {
    std::array<long, 3> part{0, 0, 0};
    int given = 0;
};

std::optional<Partial> parse_partial(std::string_view text) {
    while (!text.empty() && (text.front() == 'v' || text.front() == '=')) text.remove_prefix(1);
    text = text.substr(0, text.find_first_of("-+"));  // prerelease and build tags are not compared
    Partial p;
    if (text.empty() || text == "*" || text == "x" || text == "X") return p;
    for (int i = 0; i < 3 && !text.empty(); ++i) {
        const std::size_t dot = text.find('.');
        const std::string_view piece = text.substr(0, dot);
        if (piece == "x" || piece == "X" || piece == "*") break;
        if (piece.empty()) return std::nullopt;
        long n = 0;
        for (char c : piece) {
            if (!std::isdigit(static_cast<unsigned char>(c)) || n > 100000) return std::nullopt;
            n = n * 10 + (c - '0');
        }
        p.part[static_cast<std::size_t>(i)] = n;
        p.given = i + 1;
        if (dot == std::string_view::npos) return p;
        text.remove_prefix(dot + 1);
    }
    return p;
}

int compare(const std::array<long, 3>& a, const std::array<long, 3>& b) {
    for (std::size_t i = 0; i < 3; ++i)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

// The first version above every one the partial covers: 20 -> 21.0.0, 20.3 -> 20.4.0.
std::array<long, 3> after(const Partial& p) {
    std::array<long, 3> next{0, 0, 0};
    for (int i = 0; i < p.given; ++i)
        next[static_cast<std::size_t>(i)] = p.part[static_cast<std::size_t>(i)];
    if (p.given > 0) ++next[static_cast<std::size_t>(p.given - 1)];
    return next;
}

std::optional<bool> comparator_holds(std::string_view comparator, const std::array<long, 3>& v) {
    std::string_view op;
    for (std::string_view candidate : {">=", "<=", ">", "<", "=", "^", "~"}) {
        if (comparator.substr(0, candidate.size()) == candidate) {
            op = candidate;
            break;
        }
    }
    auto p = parse_partial(comparator.substr(op.size()));
    if (!p) return std::nullopt;
    const bool any = p->given == 0;
    const int low = compare(v, p->part);
    if (op == ">=") return low >= 0;
    if (op == ">") return any ? false : p->given < 3 ? compare(v, after(*p)) >= 0 : low > 0;
    if (op == "<") return any ? false : low < 0;
    if (op == "<=") return any || (p->given < 3 ? compare(v, after(*p)) < 0 : low <= 0);
    if (op == "^") {
        Partial upper = *p;
        upper.given = p->part[0] > 0 || p->given == 1 ? 1 : p->part[1] > 0 || p->given == 2 ? 2 : 3;
        return any || (low >= 0 && compare(v, after(upper)) < 0);
    }
    if (op == "~") {
        Partial upper = *p;
        upper.given = p->given >= 2 ? 2 : 1;
        return any || (low >= 0 && compare(v, after(upper)) < 0);
    }
    // "=" or a bare version: exactly it, or anything it covers when partial.
    return any || (p->given < 3 ? low >= 0 && compare(v, after(*p)) < 0 : low == 0);
}

// One alternative of a range: comparators joined by spaces, or a hyphen range "A - B".
std::optional<bool> alternative_holds(std::string_view text, const std::array<long, 3>& v) {
    std::vector<std::string> words;
    std::istringstream in{std::string(text)};
    for (std::string word; in >> word;) {
        // An operator written apart from its version (">= 20") belongs to it.
        if (!words.empty() && word.find_first_not_of("<>=^~") != std::string::npos &&
            words.back().find_first_not_of("<>=^~") == std::string::npos)
            words.back() += word;
        else
            words.push_back(word);
    }
    if (words.size() == 3 && words[1] == "-") {
        auto high = parse_partial(words[2]);
        auto low = comparator_holds(">=" + words[0], v);
        if (!high || !low) return std::nullopt;
        return *low && (high->given == 0 || (high->given < 3 ? compare(v, after(*high)) < 0
                                                             : compare(v, high->part) <= 0));
    }
    bool all = true;
    for (const auto& word : words) {
        auto holds = comparator_holds(word, v);
        if (!holds) return std::nullopt;
        all = all && *holds;
    }
    return all;
}

// The interpreter a script's first line names: "node" for `#!/usr/bin/env [-S] node …`, the
// path for `#!/path/node`, nullopt when the line names no node.
std::optional<std::string> node_interpreter(std::string_view line) {
    if (line.substr(0, 2) != "#!") return std::nullopt;
    std::istringstream in{std::string(line.substr(2))};
    std::vector<std::string> words;
    for (std::string word; in >> word;) words.push_back(word);
    std::size_t at = 0;
    if (at < words.size() && fs::path(words[at]).filename() == "env") {
        ++at;
        while (at < words.size() && words[at].front() == '-') ++at;  // -S and the like
    }
    if (at >= words.size()) return std::nullopt;
    const std::string& program = words[at];
    const std::string name = fs::path(program).filename().string();
    if (name != "node" && name != "nodejs") return std::nullopt;
    return program;
}

}  // namespace

std::optional<bool> satisfies(std::string_view range, std::string_view version) {
    auto v = parse_partial(version);
    if (!v || v->given == 0) return std::nullopt;
    bool any = false;
    std::size_t start = 0;
    while (true) {
        const std::size_t bar = range.find("||", start);
        auto holds = alternative_holds(range.substr(start, bar - start), v->part);
        if (!holds) return std::nullopt;
        any = any || *holds;
        if (bar == std::string_view::npos) return any;
        start = bar + 2;
    }
}

std::string describe_range(std::string_view range) {
    std::string_view text = range;
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
    if (text.substr(0, 2) == ">=" && text.find_first_of(" |<") == std::string_view::npos) {
        auto p = parse_partial(text.substr(2));
        if (p && p->given > 0) {
            std::string shown = std::to_string(p->part[0]);
            if (p->part[1] != 0 || p->part[2] != 0) shown += "." + std::to_string(p->part[1]);
            if (p->part[2] != 0) shown += "." + std::to_string(p->part[2]);
            return "≥ " + shown;
        }
    }
    return std::string(text);
}

std::optional<NodeNeed> node_need_of(const fs::path& program) {
    std::error_code ec;
    const fs::path script = fs::canonical(program, ec);
    if (ec) return std::nullopt;
    std::string first;
    {
        std::ifstream in(script, std::ios::binary);
        char head[256] = {};
        in.read(head, sizeof head);
        first.assign(head, static_cast<std::size_t>(in.gcount()));
    }
    auto interpreter = node_interpreter(first.substr(0, first.find('\n')));
    if (!interpreter) return std::nullopt;
    // The package the script belongs to: the nearest package.json above it.
    for (fs::path dir = script.parent_path(); !dir.empty(); dir = dir.parent_path()) {
        const fs::path manifest = dir / "package.json";
        if (fs::is_regular_file(manifest, ec)) {
            auto text = read_file(manifest, std::size_t{1} << 20);
            if (!text) return std::nullopt;
            auto json = nlohmann::json::parse(*text, nullptr, false);
            if (!json.is_object()) return std::nullopt;
            auto engines = json.value("engines", nlohmann::json::object());
            if (!engines.is_object() || !engines.contains("node") || !engines["node"].is_string())
                return std::nullopt;
            NodeNeed need;
            need.package = json.value("name", dir.filename().string());
            need.package_version = json.value("version", "");
            need.range = engines["node"].get<std::string>();
            need.interpreter = *interpreter;
            return need;
        }
        if (dir == dir.root_path()) break;
    }
    return std::nullopt;
}

RuntimeVerdict judge_node_runtime(const NodeNeed& need, std::string_view cli,
                                  const std::optional<fs::path>& node,
                                  std::string_view version_output) {
    std::string who(cli);
    if (!need.package_version.empty()) who += " " + need.package_version;
    const std::string wants = who + " needs Node.js " + describe_range(need.range);
    if (!node)
        return {false, wants + "; " + need.interpreter +
                           (need.interpreter.find('/') == std::string::npos ? " is not on PATH"
                                                                            : " does not exist")};
    std::string_view version = version_output.substr(0, version_output.find('\n'));
    while (!version.empty() && std::isspace(static_cast<unsigned char>(version.back())))
        version.remove_suffix(1);
    if (!version.empty() && version.front() == 'v') version.remove_prefix(1);
    if (version.empty()) return {false, wants + "; " + node->string() + " --version failed"};
    auto holds = satisfies(need.range, version);
    if (!holds)
        return {true, "Node.js " + std::string(version) + " (" + node->string() + "); " +
                          need.package + " asks for \"" + need.range +
                          "\", which cocode cannot read"};
    if (!*holds) return {false, wants + "; " + node->string() + " is " + std::string(version)};
    return {true, "Node.js " + std::string(version) + " (" + node->string() + "); " + who +
                      " needs " + describe_range(need.range)};
}

std::vector<std::string> unlisted_flags(const std::vector<std::string>& argv,
                                        std::string_view help) {
    auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
    std::vector<std::string> unknown;
    for (std::size_t i = 1; i < argv.size(); ++i) {
        const std::string& arg = argv[i];
        if (arg.size() < 2 || arg[0] != '-' || arg == "-") continue;
        const std::string flag = arg.substr(0, arg.find('='));
        bool listed = false;
        for (std::size_t at = help.find(flag); at != std::string_view::npos && !listed;
             at = help.find(flag, at + 1)) {
            const char after = at + flag.size() < help.size() ? help[at + flag.size()] : ' ';
            const char before = at > 0 ? help[at - 1] : ' ';
            listed = !(word_char(after) || after == '-' || before == '-' || word_char(before));
        }
        if (!listed) unknown.push_back(flag);
    }
    return unknown;
}

}  // namespace cocode::agent
