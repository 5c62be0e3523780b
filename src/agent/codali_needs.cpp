#include "agent/codali_needs.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>

#include "core/files.h"
#include "core/glob.h"
#include "protocol/executor.h"

namespace cocode::agent {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

constexpr std::size_t kMaxListed = 1000;  // file.list entries
constexpr std::size_t kMaxHits = 50;
constexpr std::uint64_t kMaxRead = std::uint64_t{8} << 20;  // read at all; shown up to the budget

std::optional<std::string> text_field(const ojson& fields, const char* name) {
    auto it = fields.find(name);
    if (it == fields.end() || !it->is_string() || it->get<std::string>().empty())
        return std::nullopt;
    return it->get<std::string>();
}

// A whole number field: its value, `fallback` when absent, nullopt when not a number.
std::optional<long> number_field(const ojson& fields, const char* name, long fallback) {
    auto it = fields.find(name);
    if (it == fields.end() || it->is_null()) return fallback;
    if (it->is_number_integer()) return it->get<long>();
    if (it->is_string()) {
        const std::string& s = it->get_ref<const std::string&>();
        if (!s.empty() && s.size() < 10 && std::all_of(s.begin(), s.end(), ::isdigit))
            return std::stol(s);
    }
    return std::nullopt;
}

std::vector<std::string_view> lines_of(std::string_view text) {
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        lines.push_back(text.substr(0, nl == std::string_view::npos ? text.size() : nl + 1));
        text.remove_prefix(lines.back().size());
    }
    return lines;
}

class Answerer {
  public:
    Answerer(const NeedsContext& context, protocol::CodaliResponse& response)
        : context_(context), response_(response), remaining_(context.content_budget) {}

    void answer(const protocol::Need& need) {
        const std::string& type = need.type;
        if (type == "file.read") return file_read(need);
        if (type == "file.list") return file_list(need);
        if (type.rfind("docdex.", 0) == 0) {
            if (type == "docdex.web" || type == "docdex.ast" || type == "docdex.impact_diagnostics")
                return warn("unsupported: " + type);
            static const std::vector<std::string> kKnown = {"docdex.search",  "docdex.snippet",
                                                            "docdex.open",    "docdex.tree",
                                                            "docdex.symbols", "docdex.impact"};
            if (std::find(kKnown.begin(), kKnown.end(), type) == kKnown.end())
                return warn("unsupported: " + type);
            if (!context_.index) return warn("docdex_unavailable: " + type);
            if (type == "docdex.search") return search(need);
            if (type == "docdex.snippet" || type == "docdex.open") return open(need);
            if (type == "docdex.tree") return tree(need);
            if (type == "docdex.symbols") return symbols(need);
            return impact(need);
        }
        warn("unsupported: " + type);
    }

  private:
    void warn(std::string warning) { response_.warnings.push_back(std::move(warning)); }

    // `content` as much as the budget allows, the cut said in the result and the warnings.
    void put_content(ojson& result, const std::string& label, std::string content) {
        const std::size_t total = content.size();
        if (total > remaining_) {
            std::size_t cut = remaining_;
            while (cut > 0 && (static_cast<unsigned char>(content[cut]) & 0xC0) == 0x80) --cut;
            content.resize(cut);
            result["truncated"] = true;
            result["total_bytes"] = total;
            warn("truncated: " + label + ": " + std::to_string(cut) + " of " +
                 std::to_string(total) + " bytes shown (response budget " +
                 std::to_string(context_.content_budget) + " characters)");
        }
        remaining_ -= std::min(remaining_, content.size());
        result["content"] = std::move(content);
    }

    // A file of the worktree, read through the sandbox; nullopt after a warning.
    std::optional<std::string> read(const std::string& path) {
        auto resolved = protocol::resolve_in_workspace(context_.root, path);
        if (!resolved) {
            warn("rejected: " + path + ": " + resolved.error().message);
            return std::nullopt;
        }
        struct stat st {};
        if (::stat(resolved->c_str(), &st) != 0) {
            warn("file_not_found: " + path);
            return std::nullopt;
        }
        if (!S_ISREG(st.st_mode)) {
            warn("not_a_file: " + path);
            return std::nullopt;
        }
        if (static_cast<std::uint64_t>(st.st_size) > kMaxRead) {
            warn("too_large: " + path + " (" + std::to_string(st.st_size) +
                 " bytes; ask for a line range with docdex.open)");
            return std::nullopt;
        }
        auto text = read_file(*resolved, kMaxRead);
        if (!text) {
            warn("unreadable: " + path + ": " + text.error().message);
            return std::nullopt;
        }
        if (text->find('\0') != std::string::npos) {
            warn("binary_file: " + path);
            return std::nullopt;
        }
        return std::move(text).value();
    }

    void file_read(const protocol::Need& need) {
        auto path = text_field(need.fields, "path");
        if (!path) return warn("file.read: missing path");
        auto text = read(*path);
        if (!text) return;
        ojson result = {{"type", "file.read"}, {"path", *path}};
        put_content(result, *path, std::move(*text));
        response_.results.push_back(std::move(result));
    }

    void file_list(const protocol::Need& need) {
        std::string root = text_field(need.fields, "root").value_or(".");
        const std::string pattern = text_field(need.fields, "pattern").value_or("**");
        if (auto problem = glob_problem(pattern))
            return warn("file.list: pattern '" + pattern + "': " + *problem);
        auto resolved = protocol::resolve_in_workspace(context_.root, root);
        if (!resolved) return warn("rejected: " + root + ": " + resolved.error().message);
        std::string prefix = resolved->lexically_relative(context_.root).generic_string();
        if (prefix == ".") prefix.clear();
        if (!prefix.empty()) prefix += '/';
        const std::vector<std::string> all =
            context_.index ? context_.index->files() : protocol::list_workspace(context_.root);
        ojson files = ojson::array();
        std::size_t matched = 0;
        for (const auto& path : all) {
            if (path.compare(0, prefix.size(), prefix) != 0) continue;
            if (!glob_match(pattern, path.substr(prefix.size()))) continue;
            if (++matched <= kMaxListed) files.push_back(path);
        }
        ojson result = {{"type", "file.list"},
                        {"root", root},
                        {"pattern", pattern},
                        {"files", std::move(files)}};
        if (matched > kMaxListed) {
            result["truncated"] = true;
            result["total_files"] = matched;
            warn("truncated: file.list: " + std::to_string(kMaxListed) + " of " +
                 std::to_string(matched) + " files listed; narrow root or pattern");
        }
        response_.results.push_back(std::move(result));
    }

    void search(const protocol::Need& need) {
        auto query = text_field(need.fields, "query");
        if (!query) return warn("docdex.search: missing query");
        auto limit = number_field(need.fields, "limit", 5);
        if (!limit || *limit < 1) return warn("docdex.search: limit must be a positive number");
        auto hits = context_.index->search(*query, std::min<std::size_t>(*limit, kMaxHits));
        if (!hits) return warn("docdex_search_failed: " + hits.error().message);
        ojson list = ojson::array();
        for (const auto& hit : *hits) {
            ojson h = {{"doc_id", hit.path + ":" + std::to_string(hit.line)},
                       {"path", hit.path},
                       {"line", hit.line},
                       {"score", hit.percent}};
            if (!hit.defines.empty()) h["defines"] = hit.defines;
            h["snippet"] = hit.snippet;
            list.push_back(std::move(h));
        }
        response_.results.push_back(
            {{"type", "docdex.search"}, {"query", *query}, {"hits", std::move(list)}});
    }

    // docdex.snippet (doc_id, window) and docdex.open (path or doc_id; start_line/end_line or
    // window): a range of a file's lines.
    void open(const protocol::Need& need) {
        const bool snippet = need.type == "docdex.snippet";
        std::optional<std::string> path = text_field(need.fields, "path");
        long at_line = 0;
        if (auto doc_id = text_field(need.fields, "doc_id")) {
            // "path:line", as docdex.search gives it; a bare path opens at its start.
            const std::size_t colon = doc_id->rfind(':');
            const std::string tail = colon == std::string::npos ? "" : doc_id->substr(colon + 1);
            if (!tail.empty() && tail.size() < 10 &&
                std::all_of(tail.begin(), tail.end(), ::isdigit)) {
                path = doc_id->substr(0, colon);
                at_line = std::stol(tail);
            } else {
                path = *doc_id;
            }
        }
        if (!path)
            return warn(need.type + ": missing " + (snippet ? "doc_id" : "path (or doc_id)"));
        auto window = number_field(need.fields, "window", 15);
        auto start = number_field(need.fields, "start_line", 0);
        auto end = number_field(need.fields, "end_line", 0);
        if (!window || !start || !end || *window < 0 || *start < 0 || *end < 0)
            return warn(need.type + ": start_line, end_line and window must be line numbers");
        auto text = read(*path);
        if (!text) return;
        const auto lines = lines_of(*text);
        const long count = static_cast<long>(lines.size());
        long first = 1, last = count;
        if (*start > 0 || *end > 0) {
            first = *start > 0 ? *start : 1;
            last = *end > 0 ? *end : first + std::max(*window, 1L) - 1;
        } else if (at_line > 0 || snippet || need.fields.contains("window")) {
            const long centre = at_line > 0 ? at_line : 1;
            first = centre - *window;
            last = centre + *window;
        }
        first = std::max(first, 1L);
        last = std::min(last, count);
        if (count > 0 && first > count)
            return warn(need.type + ": " + *path + " has " + std::to_string(count) +
                        " lines; line " + std::to_string(first) + " is past its end");
        std::string content;
        for (long i = first; i <= last; ++i) content.append(lines[static_cast<std::size_t>(i - 1)]);
        ojson result = {{"type", need.type}};
        if (snippet) result["doc_id"] = *text_field(need.fields, "doc_id");
        result["path"] = *path;
        result["start_line"] = count == 0 ? 0 : first;
        result["end_line"] = count == 0 ? 0 : last;
        result["total_lines"] = count;
        put_content(result, *path, std::move(content));
        response_.results.push_back(std::move(result));
    }

    void tree(const protocol::Need& need) {
        auto depth = number_field(need.fields, "maxDepth", 2);
        if (!depth || *depth < 1 || *depth > 64)
            return warn("docdex.tree: maxDepth must be a number from 1 to 64");
        ojson result = {{"type", "docdex.tree"}, {"maxDepth", *depth}};
        result["files"] = context_.index->files().size();
        put_content(result, "docdex.tree", context_.index->tree(static_cast<int>(*depth), 400));
        response_.results.push_back(std::move(result));
    }

    std::optional<std::string> file_of(const protocol::Need& need) {
        auto file = text_field(need.fields, "file");
        if (!file) file = text_field(need.fields, "path");
        if (!file) {
            warn(need.type + ": missing file");
            return std::nullopt;
        }
        // The index holds paths as git does: through the sandbox, then relative.
        auto resolved = protocol::resolve_in_workspace(context_.root, *file);
        if (!resolved) {
            warn("rejected: " + *file + ": " + resolved.error().message);
            return std::nullopt;
        }
        return resolved->lexically_relative(context_.root).generic_string();
    }

    void symbols(const protocol::Need& need) {
        auto file = file_of(need);
        if (!file) return;
        auto symbols = context_.index->symbols(*file);
        if (!symbols) return warn(symbols.error().message);
        ojson list = ojson::array();
        for (const auto& s : *symbols) {
            ojson item = {{"name", s.name}, {"kind", s.kind}, {"line", s.line}};
            if (s.end > 0) item["end_line"] = s.end;
            if (!s.scope.empty()) item["scope"] = s.scope;
            if (!s.signature.empty()) item["signature"] = s.signature;
            list.push_back(std::move(item));
        }
        response_.results.push_back(
            {{"type", "docdex.symbols"}, {"file", *file}, {"symbols", std::move(list)}});
    }

    void impact(const protocol::Need& need) {
        auto file = file_of(need);
        if (!file) return;
        auto impact = context_.index->impact(*file);
        if (!impact) return warn(impact.error().message);
        ojson inbound = ojson::array(), outbound = ojson::array();
        for (const auto& e : impact->inbound)
            inbound.push_back({{"path", e.path}, {"line", e.line}, {"import", e.spec}});
        for (const auto& e : impact->outbound) {
            ojson item = {{"import", e.spec}, {"line", e.line}};
            if (e.target) item["path"] = *e.target;
            outbound.push_back(std::move(item));
        }
        response_.results.push_back({{"type", "docdex.impact"},
                                     {"file", *file},
                                     {"inbound", std::move(inbound)},
                                     {"outbound", std::move(outbound)}});
    }

    const NeedsContext& context_;
    protocol::CodaliResponse& response_;
    std::size_t remaining_;
};

}  // namespace

protocol::CodaliResponse answer_request(const protocol::AgentRequest& request,
                                        const NeedsContext& context) {
    const auto started = std::chrono::steady_clock::now();
    protocol::CodaliResponse response;
    response.request_id = request.request_id;
    response.repo_root = ".";  // every path is relative to the worktree's root
    response.warnings = request.warnings;
    Answerer answerer(context, response);
    for (const auto& need : request.needs) answerer.answer(need);
    response.elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - started)
                              .count();
    return response;
}

protocol::CodaliResponse malformed_request(const std::string& text, const std::string& error) {
    protocol::CodaliResponse response;
    // The id, when it can be made out, so the model knows which request failed.
    response.request_id = "unknown";
    const std::size_t at = text.find("request_id");
    if (at != std::string::npos) {
        std::size_t i = text.find_first_of(":", at);
        if (i != std::string::npos) {
            ++i;
            while (i < text.size() && (text[i] == ' ' || text[i] == '"' || text[i] == '\'')) ++i;
            std::size_t j = i;
            while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) ||
                                       text[j] == '-' || text[j] == '_' || text[j] == '.'))
                ++j;
            if (j > i && j - i <= 64) response.request_id = text.substr(i, j - i);
        }
    }
    response.repo_root = ".";
    response.warnings.push_back("malformed_request: " + error);
    return response;
}

}  // namespace cocode::agent
