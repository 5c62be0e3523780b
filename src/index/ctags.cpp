#include "index/ctags.h"

#include <nlohmann/json.hpp>

#include "proc/command.h"

namespace cocode::index {
namespace {

using json = nlohmann::json;

// Files per ctags process: its argument list comes on stdin, so this only bounds the output
// held at once.
constexpr std::size_t kBatch = 4000;

std::string field(const json& tag, const char* name) {
    auto it = tag.find(name);
    return it != tag.end() && it->is_string() ? it->get<std::string>() : std::string();
}

long number(const json& tag, const char* name) {
    auto it = tag.find(name);
    return it != tag.end() && it->is_number_integer() ? it->get<long>() : 0;
}

}  // namespace

void read_ctags_json(std::string_view output, Tags& tags) {
    // Python's `from X import Y`: X is tagged as a namespace, Y as imported within scope X.
    std::size_t at = 0;
    while (at < output.size()) {
        const std::size_t nl = output.find('\n', at);
        const std::string_view line =
            output.substr(at, (nl == std::string_view::npos ? output.size() : nl) - at);
        at = nl == std::string_view::npos ? output.size() : nl + 1;
        if (line.empty() || line.front() != '{') continue;
        const json tag = json::parse(line, nullptr, false);
        if (!tag.is_object() || field(tag, "_type") != "tag") continue;
        const std::string path = field(tag, "path");
        const std::string name = field(tag, "name");
        if (path.empty() || name.empty()) continue;
        const std::string kind = field(tag, "kind");
        const std::string roles = field(tag, "roles");
        const long line_no = number(tag, "line");
        if (roles.empty() || roles == "def") {
            if (kind == "packageName" ||
                (kind == "unknown" && language_of(path) == Language::python))
                continue;  // an alias of an import, not a definition
            tags.symbols[path].push_back({name, kind, line_no, number(tag, "end"),
                                          field(tag, "scope"), field(tag, "signature")});
            continue;
        }
        auto& imports = tags.imports[path];
        switch (language_of(path)) {
            case Language::c_family:
                if (kind == "header") imports.push_back({name, line_no, false});
                break;
            case Language::go:
                if (kind == "package" && roles.find("imported") != std::string::npos)
                    imports.push_back({name, line_no, false});
                break;
            case Language::python:
                if (kind == "module") {
                    imports.push_back({name, line_no, false});
                } else if (kind == "unknown" && field(tag, "scopeKind") == "module") {
                    const std::string scope = field(tag, "scope");
                    const std::string spec =
                        scope.empty() || scope.back() == '.' ? scope + name : scope + "." + name;
                    imports.push_back({spec, line_no, true});
                }
                break;
            default:
                break;
        }
        if (imports.empty()) tags.imports.erase(path);
    }
}

Result<Tags> run_ctags(const std::filesystem::path& root, const std::vector<std::string>& files) {
    Tags tags;
    for (std::size_t start = 0; start < files.size(); start += kBatch) {
        std::string list;
        for (std::size_t i = start; i < files.size() && i < start + kBatch; ++i)
            if (files[i].find('\n') == std::string::npos) list += files[i] + "\n";
        // No pattern field (the line is in hand); end lines, signatures, long kind names;
        // reference tags for the imports.
        // --options=NONE first: a user's ~/.ctags.d must not change what is read.
        CommandOptions options;
        options.cwd = root;
        options.input = list;
        auto ran = run_command({"ctags", "--options=NONE", "--output-format=json", "--sort=no",
                                "--extras=+r", "--fields=-P+nKSerZ", "-f", "-", "-L", "-"},
                               options);
        if (!ran) return std::move(ran).error();
        if (ran->exit_code != 0)
            return Error::general("ctags failed (exit " + std::to_string(ran->exit_code) +
                                  "): " + first_line(ran->err));
        read_ctags_json(ran->out, tags);
    }
    return tags;
}

Result<std::string> ctags_version() {
    auto ran = run_command({"ctags", "--version"});
    if (!ran) return std::move(ran).error();
    const std::string line = first_line(ran->out);
    if (ran->exit_code != 0 || line.find("Universal Ctags") == std::string::npos)
        return Error::missing("ctags is not Universal Ctags (" + line +
                              "); install universal-ctags");
    return line.substr(0, line.find(','));
}

}  // namespace cocode::index
